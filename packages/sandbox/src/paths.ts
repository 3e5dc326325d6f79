/** Route templates of the emulated platform and the admin prefix. */
export const TOKEN_PATH = "/oauth2/token";
export const CONTROLS_PATH = "/v2/identity/controls";
export const IDENTITIES_PATH = "/v2/identity/identities";
export const IDENTITY_PATH = "/v2/identity/identities/:id";
export const QUOTE_EXECUTIONS_PATH = "/v2/profiles/:profile_id/quote-executions";
export const ORDER_PATH = "/v2/profiles/:profile_id/orders/:id";
export const INTERNAL_TRANSFER_PATH = "/v2/transfer/internal";
export const DEPOSIT_ADDRESSES_PATH = "/v2/transfer/deposit-addresses";
export const ORCHESTRATION_RULE_PATH = "/v2/orchestration/rules/:id";
export const ADMIN_PREFIX = "/__sandbox";
