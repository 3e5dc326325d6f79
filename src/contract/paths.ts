/**
 * Every path of the platform's interface, as the published schema writes its templates
 * (`{id}`), and the token endpoint. The client keys its rate budget on these templates, as the
 * platform counts; the sandbox routes them (`routeTemplate` turns `{id}` into `:id`).
 * `test/unit/contract.published-schema.test.ts` checks them against the schema.
 */

/** The OAuth2 client-credentials token endpoint. */
export const TOKEN_PATH = "/oauth2/token";

/** Path templates of the identity endpoints, as published. */
export const IDENTITY_PATHS = Object.freeze({
  identities: "/v2/identity/identities",
  identity: "/v2/identity/identities/{id}",
  controls: "/v2/identity/controls",
} as const);

/** Path templates of the other endpoints of the published schema. */
export const OTHER_PATHS = Object.freeze({
  quoteExecutions: "/v2/profiles/{profile_id}/quote-executions",
  order: "/v2/profiles/{profile_id}/orders/{id}",
  internalTransfer: "/v2/transfer/internal",
  depositAddresses: "/v2/transfer/deposit-addresses",
  orchestrationRule: "/v2/orchestration/rules/{id}",
} as const);

/** Every published API path template. */
export const API_PATHS: readonly string[] = Object.freeze([
  ...Object.values(IDENTITY_PATHS),
  ...Object.values(OTHER_PATHS),
]);

/**
 * A published template in the `:param` form routers use.
 *
 * @example
 *   routeTemplate("/v2/identity/identities/{id}"); // "/v2/identity/identities/:id"
 */
export function routeTemplate(path: string): string {
  return path.replace(/\{([^/}]+)\}/g, ":$1");
}
