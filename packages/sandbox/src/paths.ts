/** Route templates of the emulated platform (the contract's paths in `:param` form) and the admin prefix. */
import { IDENTITY_PATHS, OTHER_PATHS, routeTemplate, TOKEN_PATH } from "./shared.ts";

export { TOKEN_PATH };
export const CONTROLS_PATH = routeTemplate(IDENTITY_PATHS.controls);
export const IDENTITIES_PATH = routeTemplate(IDENTITY_PATHS.identities);
export const IDENTITY_PATH = routeTemplate(IDENTITY_PATHS.identity);
export const QUOTE_EXECUTIONS_PATH = routeTemplate(OTHER_PATHS.quoteExecutions);
export const ORDER_PATH = routeTemplate(OTHER_PATHS.order);
export const INTERNAL_TRANSFER_PATH = routeTemplate(OTHER_PATHS.internalTransfer);
export const DEPOSIT_ADDRESSES_PATH = routeTemplate(OTHER_PATHS.depositAddresses);
export const ORCHESTRATION_RULE_PATH = routeTemplate(OTHER_PATHS.orchestrationRule);
export const ADMIN_PREFIX = "/__sandbox";
