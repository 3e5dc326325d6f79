import { randomBytes } from "node:crypto";
import { normalizeEndpointRates } from "./gateway/endpoint-limits.ts";
import { UPDATED_AT_POLICIES } from "./identity/types.ts";
import {
  PLATFORM_RATE_LIMIT_RPS,
  RATE_PENALTY_S,
  RATE_WINDOW_S,
  TOKEN_RATE_LIMIT_RPS,
} from "./shared.ts";
import type { Limits, SandboxClient, SandboxOptions } from "./types.ts";
import { READ_ONLY_SCOPES, SCOPES } from "./types.ts";

export const DEFAULT_LIMITS: Limits = Object.freeze({
  rateLimitRps: PLATFORM_RATE_LIMIT_RPS,
  tokenRateLimitRps: TOKEN_RATE_LIMIT_RPS,
  rateWindowS: RATE_WINDOW_S,
  penaltyS: RATE_PENALTY_S,
  duplicatePolicy: "allow",
  updatedAtPolicy: "all",
  tokenTtlS: 3600,
  endpointRateLimits: Object.freeze({}),
});

/** Throws a RangeError naming the setting when a limit is out of range. */
export function checkLimits(l: Partial<Limits>): void {
  const nonNegative = ["rateLimitRps", "tokenRateLimitRps", "penaltyS"] as const;
  for (const k of nonNegative) {
    const v = l[k];
    if (v !== undefined && !(typeof v === "number" && Number.isFinite(v) && v >= 0)) {
      throw new RangeError(`${k} must be a number >= 0 (0 turns it off), got ${v}`);
    }
  }
  for (const k of ["rateWindowS", "tokenTtlS"] as const) {
    const v = l[k];
    if (v !== undefined && !(typeof v === "number" && Number.isFinite(v) && v > 0)) {
      throw new RangeError(`${k} must be a number of seconds > 0, got ${v}`);
    }
  }
  if (l.duplicatePolicy !== undefined && !["allow", "reject"].includes(l.duplicatePolicy)) {
    throw new RangeError(`duplicatePolicy must be allow or reject, got ${l.duplicatePolicy}`);
  }
  const policy = l.updatedAtPolicy;
  if (policy !== undefined && !(UPDATED_AT_POLICIES as readonly unknown[]).includes(policy)) {
    throw new RangeError(
      `updatedAtPolicy must be ${UPDATED_AT_POLICIES.join(", ")}, got ${JSON.stringify(policy)}`,
    );
  }
  if (l.endpointRateLimits !== undefined) normalizeEndpointRates(l.endpointRateLimits);
}

/**
 * Start options of the sandbox: the default limits, their checks, the default clients and the
 * credentials the handle exposes.
 */

/** Checks the start options that are not faults or limits. */
export function checkStartOptions(o: SandboxOptions): void {
  if (o.port !== undefined && !(Number.isInteger(o.port) && o.port >= 0 && o.port <= 65535)) {
    throw new RangeError(`port must be an integer between 0 and 65535, got ${o.port}`);
  }
  if (o.identities !== undefined && !(Number.isInteger(o.identities) && o.identities >= 0)) {
    throw new RangeError(`identities must be an integer >= 0, got ${o.identities}`);
  }
  if (o.seed !== undefined && !Number.isInteger(o.seed)) {
    throw new RangeError(`seed must be an integer, got ${o.seed}`);
  }
  const rate = o.autoMigrateRate;
  if (rate !== undefined && !(typeof rate === "number" && Number.isFinite(rate) && rate >= 0)) {
    throw new RangeError(
      `autoMigrateRate must be a number of identities a second >= 0, got ${rate}`,
    );
  }
  for (const k of ["migratedFraction", "driftFraction", "legacyDriftFraction"] as const) {
    const v = o[k];
    if (v !== undefined && !(typeof v === "number" && v >= 0 && v <= 1)) {
      throw new RangeError(`${k} must be between 0 and 1, got ${v}`);
    }
  }
  if (o.clients !== undefined) {
    if (o.clients.length === 0) throw new RangeError("clients must not be empty");
    for (const c of o.clients) {
      if (!c.clientId || !c.clientSecret) {
        throw new RangeError("every client needs a non-empty clientId and clientSecret");
      }
    }
  }
}

/** One read-write client (every scope) and one read-only client (every read), throwaway secrets. */
export function defaultClients(): SandboxClient[] {
  return [
    {
      clientId: "sandbox-client",
      clientSecret: randomBytes(24).toString("base64url"),
      scopes: Object.values(SCOPES),
    },
    {
      clientId: "sandbox-read-only",
      clientSecret: randomBytes(24).toString("base64url"),
      scopes: [...READ_ONLY_SCOPES],
    },
  ];
}

/** The credentials the Sandbox exposes: the first writing client and the first non-writing one. */
export function pickCredentials(clients: readonly SandboxClient[]) {
  const writer = clients.find((c) => c.scopes.includes(SCOPES.writeControl)) ?? clients[0];
  const reader = clients.find((c) => !c.scopes.includes(SCOPES.writeControl));
  return Object.freeze({
    clientId: writer?.clientId ?? "",
    clientSecret: writer?.clientSecret ?? "",
    readOnlyClientId: reader?.clientId ?? "",
    readOnlyClientSecret: reader?.clientSecret ?? "",
  });
}

/** The limit settings among the start options. */
export function pickLimits(o: SandboxOptions): Partial<Limits> {
  return {
    rateLimitRps: o.rateLimitRps,
    tokenRateLimitRps: o.tokenRateLimitRps,
    rateWindowS: o.rateWindowS,
    penaltyS: o.penaltyS,
    duplicatePolicy: o.duplicatePolicy,
    updatedAtPolicy: o.updatedAtPolicy,
    tokenTtlS: o.tokenTtlS,
    endpointRateLimits: o.endpointRateLimits,
  };
}
