/**
 * The platform's numbers, written once: rate limits per endpoint, the token endpoint's rate, the
 * penalty after going over a limit, the page size and the id limit. The client's defaults and
 * the sandbox's emulation both come from here.
 */
import { IDENTITY_PATHS, OTHER_PATHS } from "./paths.ts";

/** The documented limit of an ordinary endpoint, per client, in requests/second. */
export const PLATFORM_RATE_LIMIT_RPS = 50;

/** Endpoints whose own limit differs from {@link PLATFORM_RATE_LIMIT_RPS}, by path template. */
export const PLATFORM_ENDPOINT_RPS: Readonly<Record<string, number>> = Object.freeze({
  [OTHER_PATHS.internalTransfer]: 20,
  [OTHER_PATHS.quoteExecutions]: 10,
});

/** The token endpoint's limit, in requests/second. */
export const TOKEN_RATE_LIMIT_RPS = 1;

/** The window over which the platform averages a rate, in seconds. */
export const RATE_WINDOW_S = 300;

/** How long an endpoint refuses every request after a client went over its limit, in seconds. */
export const RATE_PENALTY_S = 300;

/** The most items one listing page holds (the `limit` query parameter's maximum). */
export const MAX_PAGE_SIZE = 1000;

/** The longest identity id, in characters: the source reader classifies a longer id as an anomaly,
 * and the sandbox refuses to seed one, so a sandbox seeded from a source serves every id the tool
 * accepts. */
export const MAX_IDENTITY_ID_LENGTH = 256;

/** The identity endpoints, whose GET, POST and DELETE share one budget per template. */
export const IDENTITY_ENDPOINTS: readonly string[] = Object.freeze(Object.values(IDENTITY_PATHS));
