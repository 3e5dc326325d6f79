import { isJsonObject } from "../input/body-fields.ts";
import {
  CONTROLS_PATH,
  DEPOSIT_ADDRESSES_PATH,
  IDENTITIES_PATH,
  IDENTITY_PATH,
  INTERNAL_TRANSFER_PATH,
  ORCHESTRATION_RULE_PATH,
  ORDER_PATH,
  QUOTE_EXECUTIONS_PATH,
} from "../paths.ts";
import {
  PLATFORM_RATE_LIMIT_RPS,
  PLATFORM_ENDPOINT_RPS as PUBLISHED_ENDPOINT_RPS,
  routeTemplate,
} from "../shared.ts";
import type { Limits } from "../types.ts";

/** The platform's limit of an ordinary endpoint; `rateLimitRps` plays this role in the sandbox. */
export const PLATFORM_DEFAULT_RPS = PLATFORM_RATE_LIMIT_RPS;

/**
 * The platform's per-endpoint limits that differ from the ordinary one (the contract's table, by
 * route template). Scaled by `rateLimitRps / PLATFORM_DEFAULT_RPS`, so a sandbox started with
 * `--rate-limit 5` keeps the platform's proportions (transfers 2 rps, quote executions 1 rps) and
 * `--rate-limit 0` turns every limit off.
 */
export const PLATFORM_ENDPOINT_RPS: Readonly<Record<string, number>> = Object.freeze(
  Object.fromEntries(
    Object.entries(PUBLISHED_ENDPOINT_RPS).map(([path, rps]) => [routeTemplate(path), rps]),
  ),
);

/** Every rate-limited API endpoint, as the route template the limiter keys on. */
export const RATE_LIMITED_ENDPOINTS: readonly string[] = Object.freeze([
  CONTROLS_PATH,
  IDENTITIES_PATH,
  IDENTITY_PATH,
  QUOTE_EXECUTIONS_PATH,
  ORDER_PATH,
  INTERNAL_TRANSFER_PATH,
  DEPOSIT_ADDRESSES_PATH,
  ORCHESTRATION_RULE_PATH,
]);

/** "/v2/profiles/{profile_id}/x", "/v2/profiles/:id/x" and "/v2/profiles/*\/x" all read the same. */
function pattern(path: string): string {
  return path.replace(/\/(?::[^/]+|\{[^/]*\}|\*)(?=\/|$)/g, "/*");
}

const BY_PATTERN = new Map(RATE_LIMITED_ENDPOINTS.map((e) => [pattern(e), e]));

/**
 * Checks an override table (endpoint path → requests/s, 0 = unlimited) and rewrites its keys to
 * route templates. Paths may be written as the platform documents them (`/v2/profiles/*\/quote-executions`).
 *
 * @example
 *   normalizeEndpointRates({ "/v2/profiles/*\/quote-executions": 2 });
 *   // { "/v2/profiles/:profile_id/quote-executions": 2 }
 */
export function normalizeEndpointRates(table: unknown): Record<string, number> {
  if (!isJsonObject(table)) {
    throw new RangeError("endpointRateLimits must be an object of endpoint path → requests/s");
  }
  const out: Record<string, number> = {};
  for (const [path, rps] of Object.entries(table)) {
    const endpoint = BY_PATTERN.get(pattern(path.split("?")[0] ?? ""));
    if (endpoint === undefined) {
      throw new RangeError(
        `endpointRateLimits: unknown endpoint ${JSON.stringify(path.slice(0, 80))}; known: ${[...BY_PATTERN.keys()].join(", ")}`,
      );
    }
    if (!(typeof rps === "number" && Number.isFinite(rps) && rps >= 0)) {
      throw new RangeError(`endpointRateLimits[${path}] must be a number >= 0, got ${rps}`);
    }
    out[endpoint] = rps;
  }
  return out;
}

/**
 * The requests/s one endpoint allows: 0 (off) whenever `rateLimitRps` is 0; else the override,
 * else the platform's table scaled by `rateLimitRps / 50`, else `rateLimitRps`.
 *
 * @example
 *   effectiveRps({ ...DEFAULT_LIMITS }, "/v2/transfer/internal"); // 20
 */
export function effectiveRps(limits: Limits, endpoint: string): number {
  if (limits.rateLimitRps <= 0) return 0;
  const override = limits.endpointRateLimits[endpoint];
  if (override !== undefined) return override;
  const platform = PLATFORM_ENDPOINT_RPS[endpoint];
  if (platform !== undefined) return (limits.rateLimitRps * platform) / PLATFORM_DEFAULT_RPS;
  return limits.rateLimitRps;
}
