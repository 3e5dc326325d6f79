/** The platform client's public surface; other folders import from here only. */
export { backoffDelayMs, sleep } from "../backoff.ts";
export type { ClientMetrics, EndpointMetrics } from "./client-metrics.ts";
export {
  type CreateControlInput,
  createPlatformClient,
  type ListIdentitiesOptions,
  type PlatformClient,
  type PlatformClientOptions,
} from "./platform-client.ts";
export {
  type Classification,
  PlatformError,
  type PlatformErrorKind,
} from "./platform-error.ts";
export { CAP_GUARD_MS } from "./token-bucket.ts";
export * from "./types.ts";
export { normalizeSetBy } from "./wire-parsers.ts";
