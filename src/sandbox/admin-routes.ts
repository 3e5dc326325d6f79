import type { FastifyInstance } from "fastify";
import { ADMIN_PREFIX } from "./context.ts";
import { ProblemError } from "./gateway/problem.ts";
import type { SeedRow } from "./identity/identity-seed.ts";
import { syntheticSeedRows } from "./identity/identity-seed.ts";
import { requestBody } from "./input/body-fields.ts";
import { parseBool, type Query } from "./input/query-params.ts";
import type { AddControlInput, Faults, Limits, Sandbox, SeedIdentity } from "./types.ts";

const FAULT_KEYS: Record<string, keyof Faults> = {
  latency_ms: "latencyMs",
  latency_jitter_ms: "latencyJitterMs",
  fail_rate: "failRate",
  hang_rate: "hangRate",
  ambiguous_rate: "ambiguousRate",
};

const LIMIT_KEYS: Record<string, keyof Limits> = {
  rate_limit_rps: "rateLimitRps",
  token_rate_limit_rps: "tokenRateLimitRps",
  rate_window_s: "rateWindowS",
  penalty_s: "penaltyS",
  duplicate_policy: "duplicatePolicy",
  token_ttl_s: "tokenTtlS",
  endpoint_rate_limits: "endpointRateLimits",
};

const objectBody = requestBody;

/** Accepts snake_case or camelCase keys; refuses unknown ones so a typo is never silently ignored. */
function pickSettings<T>(body: Record<string, unknown>, keys: Record<string, keyof T>): Partial<T> {
  const camel = new Set<string>(Object.values(keys) as string[]);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    const name = keys[k] ?? (camel.has(k) ? k : undefined);
    if (name === undefined) {
      throw new ProblemError(
        400,
        `unknown setting ${JSON.stringify(k)}; known: ${Object.keys(keys).join(", ")}`,
      );
    }
    out[name as string] = v;
  }
  return out as Partial<T>;
}

/** Runs a programmatic-API call and turns its RangeError into a 400 problem. */
function badRequestOnRange<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RangeError) throw new ProblemError(400, err.message);
    throw err;
  }
}

function num(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "number") throw new ProblemError(400, `${name} must be a number, got ${v}`);
  return v;
}

/**
 * The admin surface: no auth, no limits, no faults, never under /v2. It mirrors the programmatic
 * API so that a separate process (benchmark, chaos test) can drive a sandbox started by the CLI.
 */
export function registerAdminRoutes(
  app: FastifyInstance,
  sandbox: Sandbox,
  hasIdentity: (id: string) => boolean,
): void {
  const mustExist = (id: string) => {
    if (!hasIdentity(id)) throw new ProblemError(404, `identity ${id} not found`);
  };
  const big = { bodyLimit: 256 * 1024 * 1024 };

  app.post(`${ADMIN_PREFIX}/seed`, big, async (request) => {
    const b = objectBody(request.body, "{identities} or {count, seed}");
    const opts = {
      migratedFraction: num(b.migrated_fraction, "migrated_fraction"),
      driftFraction: num(b.drift_fraction, "drift_fraction"),
      seed: num(b.seed, "seed"),
    };
    let rows: Iterable<SeedRow>;
    if (Array.isArray(b.identities)) rows = b.identities as SeedIdentity[];
    else if (typeof b.count === "number" && Number.isInteger(b.count) && b.count >= 0) {
      rows = syntheticSeedRows(b.count, opts.seed ?? 1);
    } else {
      throw new ProblemError(
        400,
        "give identities (an array of {id, user_disabled, admin_disabled, created_at?}) or count (an integer >= 0)",
      );
    }
    return badRequestOnRange(() => sandbox.seedIdentities(rows as Iterable<SeedIdentity>, opts));
  });

  app.post(`${ADMIN_PREFIX}/reset`, async () => {
    sandbox.reset();
    return {};
  });

  app.put(`${ADMIN_PREFIX}/faults`, async (request) => {
    const f = pickSettings<Faults>(objectBody(request.body, "fault settings"), FAULT_KEYS);
    badRequestOnRange(() => sandbox.setFaults(f));
    return {};
  });

  app.put(`${ADMIN_PREFIX}/limits`, async (request) => {
    const l = pickSettings<Limits>(objectBody(request.body, "limit settings"), LIMIT_KEYS);
    badRequestOnRange(() => sandbox.setLimits(l));
    return {};
  });

  app.post(`${ADMIN_PREFIX}/revoke-tokens`, async () => {
    sandbox.revokeTokens();
    return {};
  });

  app.get(`${ADMIN_PREFIX}/stats`, async () => sandbox.stats());

  app.get(`${ADMIN_PREFIX}/requests`, async (request) => {
    const q = request.query as Query;
    const from = Number(q.from ?? 0);
    const to = q.to === undefined ? undefined : Number(q.to);
    if (!Number.isFinite(from) || (to !== undefined && !Number.isFinite(to))) {
      throw new ProblemError(400, "from and to must be epoch milliseconds");
    }
    const endpoint = typeof q.endpoint === "string" ? q.endpoint : undefined;
    return sandbox.requestsIn({ from, to, endpoint });
  });

  app.post(`${ADMIN_PREFIX}/identities/:id/controls`, async (request) => {
    const { id } = request.params as { id: string };
    mustExist(id);
    const b = objectBody(
      request.body,
      "{type, set_by?, is_overridable?, reason_code?, reason?, deleted?}",
    );
    return badRequestOnRange(() => sandbox.addControl(id, b as unknown as AddControlInput));
  });

  app.get(`${ADMIN_PREFIX}/identities/:id/controls`, async (request) => {
    const { id } = request.params as { id: string };
    mustExist(id);
    const includeDeleted = parseBool(request.query as Query, "include_deleted", false);
    return { items: badRequestOnRange(() => sandbox.controlsOf(id, { includeDeleted })) };
  });
}
