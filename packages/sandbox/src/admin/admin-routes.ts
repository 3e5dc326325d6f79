import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { ProblemError } from "../gateway/problem.ts";
import { requestBody } from "../input/body-fields.ts";
import type { Query } from "../input/query-params.ts";
import { seeding } from "../input/seed-input.ts";
import { ADMIN_PREFIX } from "../paths.ts";
import type { Faults, Limits } from "../types.ts";
import { adminApi } from "./admin-api.ts";

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
  updated_at_policy: "updatedAtPolicy",
  token_ttl_s: "tokenTtlS",
  endpoint_rate_limits: "endpointRateLimits",
};

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

/**
 * The sandbox-wide admin routes (no auth, no limits, no faults, never under /v2), the twins of
 * {@link adminApi}: `POST /__sandbox/reset`, `/revoke-tokens`, `PUT /__sandbox/faults`, `/limits`,
 * `GET /__sandbox/stats`, `/requests`. They let a separate process (benchmark, chaos test) drive a
 * sandbox started by the CLI.
 */
export function registerAdminRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const api = adminApi(ctx);

  app.post(`${ADMIN_PREFIX}/reset`, async () => {
    api.reset();
    return {};
  });

  app.put(`${ADMIN_PREFIX}/faults`, async (request) => {
    const f = pickSettings<Faults>(requestBody(request.body, "fault settings"), FAULT_KEYS);
    seeding(() => api.setFaults(f));
    return {};
  });

  app.put(`${ADMIN_PREFIX}/limits`, async (request) => {
    const l = pickSettings<Limits>(requestBody(request.body, "limit settings"), LIMIT_KEYS);
    seeding(() => api.setLimits(l));
    return {};
  });

  app.post(`${ADMIN_PREFIX}/revoke-tokens`, async () => {
    api.revokeTokens();
    return {};
  });

  app.get(`${ADMIN_PREFIX}/stats`, async () => api.stats());

  app.get(`${ADMIN_PREFIX}/requests`, async (request) => {
    const q = request.query as Query;
    const from = Number(q.from ?? 0);
    const to = q.to === undefined ? undefined : Number(q.to);
    if (!Number.isFinite(from) || (to !== undefined && !Number.isFinite(to))) {
      throw new ProblemError(400, "from and to must be epoch milliseconds");
    }
    const endpoint = typeof q.endpoint === "string" ? q.endpoint : undefined;
    return api.requestsIn({ from, to, endpoint });
  });
}
