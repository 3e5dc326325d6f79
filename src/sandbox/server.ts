import type { AddressInfo } from "node:net";
import Fastify, { type FastifyError, type FastifyInstance } from "fastify";
import { MAX_IDENTITY_ID_LENGTH } from "../contract/limits.ts";
import { registerAdminRoutes } from "./admin-routes.ts";
import { ADMIN_PREFIX, type SandboxContext, TOKEN_PATH } from "./context.ts";
import { registerDepositAddressRoutes } from "./deposit-address/deposit-address-routes.ts";
import { registerExchangeRoutes } from "./exchange/exchange-routes.ts";
import { registerExtAdminRoutes } from "./ext-admin-routes.ts";
import { ExtStore } from "./ext-store.ts";
import { guardAdminOrigin } from "./gateway/admin-origin.ts";
import { effectiveRps, normalizeEndpointRates } from "./gateway/endpoint-limits.ts";
import { FaultInjector, stripUndefined } from "./gateway/faults.ts";
import { answerMethodNotAllowed } from "./gateway/method-not-allowed.ts";
import { ProblemError, sendProblem } from "./gateway/problem.ts";
import { RateLimiter } from "./gateway/rate-limiter.ts";
import { createRequestGuard, routeKey } from "./gateway/request-guard.ts";
import { RequestStats } from "./gateway/request-stats.ts";
import { registerApiRoutes } from "./identity/control-routes.ts";
import { registerIdentityRoutes } from "./identity/identity-routes.ts";
import { type SeedRow, seedStore, syntheticSeedRows } from "./identity/identity-seed.ts";
import { isClientSetBy, SandboxStore } from "./identity/identity-store.ts";
import { setBySpelling } from "./identity/set-by.ts";
import { createValidatorCompiler, formatSchemaError } from "./input/schema-validation.ts";
import { OAuthIssuer } from "./oauth/oauth-issuer.ts";
import { registerTokenRoute } from "./oauth/token-route.ts";
import { registerOrchestrationRoutes } from "./orchestration/orchestration-routes.ts";
import { CursorCodec } from "./paging/cursor-codec.ts";
import {
  checkLimits,
  checkStartOptions,
  DEFAULT_LIMITS,
  defaultClients,
  pickCredentials,
} from "./settings.ts";
import { registerTransferRoutes } from "./transfer/transfer-routes.ts";
import type {
  AddControlInput,
  ControlRecord,
  Limits,
  Sandbox,
  SandboxOptions,
  SandboxStats,
  SeedIdentity,
  SeedOptions,
} from "./types.ts";

function monotonicClock(): () => number {
  let last = 0;
  return () => {
    const now = Date.now();
    last = now > last ? now : last + 1;
    return last;
  };
}

function hostForUrl(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

function buildApp(ctx: SandboxContext): FastifyInstance {
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    return503OnClosing: false,
    bodyLimit: 1024 * 1024,
    // Path parameters carry identity ids of up to 256 characters, percent-encoded up to 3 bytes each.
    maxParamLength: 3 * MAX_IDENTITY_ID_LENGTH,
    schemaErrorFormatter: (errors, dataVar) =>
      new ProblemError(400, formatSchemaError(errors as never, dataVar)),
  });
  app.setValidatorCompiler(createValidatorCompiler());
  // Only JSON (the API) and forms (the token endpoint); anything else is a 415. Our own JSON
  // parser allows an empty body (a DELETE sent with a JSON content type) and says what is wrong
  // with a malformed one.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === "") return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(
        new ProblemError(400, `the body is not valid JSON: ${(err as Error).message}`),
        undefined,
      );
    }
  });
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string" },
    (_req, body, done) => done(null, new URLSearchParams(body as string)),
  );
  app.addHook("onRequest", guardAdminOrigin);
  app.addHook("onRequest", createRequestGuard(ctx));
  app.addHook("onResponse", async (request, reply) => {
    ctx.stats.status(routeKey(request), reply.statusCode);
  });
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ProblemError) {
      return sendProblem(reply, err.status, err.detail, undefined, err.kind, err.meta);
    }
    const status =
      err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (request.routeOptions.url === TOKEN_PATH && status < 500) {
      return reply.code(400).send({ error: "invalid_request", error_description: err.message });
    }
    return sendProblem(
      reply,
      status,
      status === 500 ? `internal sandbox error: ${err.message}` : err.message,
    );
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    return sendProblem(reply, 404, `no route ${request.method} ${path.slice(0, 200)}`);
  });
  return app;
}

/**
 * Starts a local emulator of the platform's interface: OAuth2 client credentials, identities and
 * controls with the platform's rules, quote executions, orders, internal transfers with balances,
 * deposit addresses and orchestration rules, per-endpoint rate limits with penalties, fault
 * injection, and an admin surface under /__sandbox. Bound to 127.0.0.1 and an OS-chosen
 * port by default, so tests can run many at once.
 *
 * @example
 *   const sandbox = await startSandbox({ identities: 1000, rateLimitRps: 0 });
 *   const res = await fetch(sandbox.tokenUrl, { method: "POST", body: new URLSearchParams({
 *     grant_type: "client_credentials", client_id: sandbox.credentials.clientId,
 *     client_secret: sandbox.credentials.clientSecret }) });
 *   await sandbox.close();
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  checkStartOptions(options);
  const limits: Limits = { ...DEFAULT_LIMITS, ...stripUndefined(pickLimits(options)) };
  checkLimits(limits);
  limits.endpointRateLimits = normalizeEndpointRates(limits.endpointRateLimits);
  const seed = options.seed ?? 1;
  const nextCreatedAt = monotonicClock();
  const clients = options.clients ?? defaultClients();
  const ctx: SandboxContext = {
    store: new SandboxStore(),
    ext: new ExtStore(nextCreatedAt),
    cursors: new CursorCodec(),
    issuer: new OAuthIssuer(clients, limits.tokenTtlS),
    faults: new FaultInjector(options, options.faultSeed ?? seed),
    limits,
    apiLimiter: new RateLimiter((endpoint) => ({
      rps: effectiveRps(limits, endpoint),
      windowS: limits.rateWindowS,
      penaltyS: limits.penaltyS,
    })),
    tokenLimiter: new RateLimiter(() => ({
      rps: limits.tokenRateLimitRps,
      windowS: limits.rateWindowS,
      penaltyS: limits.penaltyS,
    })),
    stats: new RequestStats(),
    writes: { creates: 0, deletes: 0 },
    hanging: new Set(),
    nextCreatedAt,
    setBy: setBySpelling(options.setBySpelling),
  };
  const seedDefaults = {
    migratedFraction: options.migratedFraction ?? 0.5,
    driftFraction: options.driftFraction ?? 0,
    seed,
    setBy: ctx.setBy,
  };
  const startedAt = new Date().toISOString();
  const app = buildApp(ctx);
  const host = options.host ?? "127.0.0.1";

  const sandbox: Sandbox = {
    apiUrl: "",
    tokenUrl: "",
    adminUrl: "",
    credentials: pickCredentials(clients),
    ...ctx.ext.api(),
    seedIdentities(rows: Iterable<SeedIdentity>, opts: SeedOptions = {}) {
      return seedStore(
        ctx.store,
        rows as Iterable<SeedRow>,
        { ...seedDefaults, ...stripUndefined(opts) },
        ctx.nextCreatedAt,
      );
    },
    addControl: (identityId, c) => addControl(ctx, identityId, c),
    controlsOf(identityId, opts = {}) {
      const identity = ctx.store.get(identityId);
      if (!identity) throw new RangeError(`identity ${identityId} not found`);
      const all = identity.controls ?? [];
      return all
        .filter((c) => opts.includeDeleted || c.deleted_at === undefined)
        .map((c) => ({ ...c }));
    },
    setFaults: (f) => ctx.faults.set(f),
    setLimits(l) {
      checkLimits(l);
      Object.assign(limits, stripUndefined(l));
      if (l.endpointRateLimits !== undefined) {
        limits.endpointRateLimits = normalizeEndpointRates(l.endpointRateLimits);
      }
      if (l.tokenTtlS !== undefined) ctx.issuer.ttlS = l.tokenTtlS;
      if (
        l.endpointRateLimits !== undefined ||
        l.rateLimitRps !== undefined ||
        l.tokenRateLimitRps !== undefined ||
        l.rateWindowS !== undefined
      ) {
        ctx.apiLimiter.clearWindows();
        ctx.tokenLimiter.clearWindows();
      }
    },
    revokeTokens: () => ctx.issuer.revokeAll(),
    reset() {
      ctx.store.reset();
      ctx.ext.reset();
      ctx.stats.reset();
      ctx.issuer.reset();
      ctx.apiLimiter.reset();
      ctx.tokenLimiter.reset();
      ctx.faults.resetCounts();
      ctx.writes.creates = 0;
      ctx.writes.deletes = 0;
    },
    stats: () => collectStats(ctx, startedAt),
    requestsIn: (w) => ctx.stats.window(w),
    async close() {
      for (const s of ctx.hanging) s.destroy();
      ctx.hanging.clear();
      await app.close();
    },
  };

  answerMethodNotAllowed(app, () => {
    registerTokenRoute(app, ctx);
    registerApiRoutes(app, ctx);
    registerIdentityRoutes(app, ctx);
    registerExchangeRoutes(app, ctx);
    registerTransferRoutes(app, ctx);
    registerDepositAddressRoutes(app, ctx);
    registerOrchestrationRoutes(app, ctx);
  });
  registerAdminRoutes(app, sandbox, (id) => ctx.store.get(id) !== undefined);
  registerExtAdminRoutes(app, sandbox);
  if (options.identities) {
    sandbox.seedIdentities(syntheticSeedRows(options.identities, seed) as Iterable<SeedIdentity>);
  }
  await app.listen({ host, port: options.port ?? 0 });
  const { port } = app.server.address() as AddressInfo;
  const base = `http://${hostForUrl(host)}:${port}`;
  Object.assign(sandbox, {
    apiUrl: base,
    tokenUrl: `${base}${TOKEN_PATH}`,
    adminUrl: `${base}${ADMIN_PREFIX}`,
  });
  return Object.freeze(sandbox);
}

function pickLimits(o: SandboxOptions): Partial<Limits> {
  return {
    rateLimitRps: o.rateLimitRps,
    tokenRateLimitRps: o.tokenRateLimitRps,
    rateWindowS: o.rateWindowS,
    penaltyS: o.penaltyS,
    duplicatePolicy: o.duplicatePolicy,
    tokenTtlS: o.tokenTtlS,
    endpointRateLimits: o.endpointRateLimits,
  };
}

function addControl(ctx: SandboxContext, identityId: string, c: AddControlInput): ControlRecord {
  const identity = ctx.store.get(identityId);
  if (!identity) throw new RangeError(`identity ${identityId} not found`);
  if (typeof c?.type !== "string" || c.type === "") {
    throw new RangeError(
      "type is required (any string; SELL_ONLY, CLOSED, FROZEN, DORMANT are the platform's)",
    );
  }
  for (const k of ["set_by", "reason_code", "reason"] as const) {
    if (c[k] !== undefined && typeof c[k] !== "string")
      throw new RangeError(`${k} must be a string`);
  }
  for (const k of ["is_overridable", "deleted"] as const) {
    if (c[k] !== undefined && typeof c[k] !== "boolean")
      throw new RangeError(`${k} must be a boolean`);
  }
  const setBy = c.set_by ?? ctx.setBy.client;
  const record = ctx.store.insertControl(
    identity,
    {
      type: c.type,
      set_by: setBy,
      is_overridable: c.is_overridable ?? isClientSetBy(setBy),
      reason_code: c.reason_code ?? (isClientSetBy(setBy) ? "OTHER" : "ADMINISTRATIVE"),
      reason: c.reason ?? "added through the sandbox admin surface",
    },
    { deleted: c.deleted ?? false, touch: true },
  );
  return { ...record };
}

function collectStats(ctx: SandboxContext, startedAt: string): SandboxStats {
  const now = Date.now();
  const mem = process.memoryUsage();
  return {
    startedAt,
    identities: ctx.store.identityCount,
    controls: ctx.store.controlCounts,
    ...ctx.stats.snapshot(),
    tokensIssued: ctx.issuer.issued,
    penalised: [...ctx.apiLimiter.penalties(now), ...ctx.tokenLimiter.penalties(now)].map((p) => ({
      client: p.client,
      endpoint: p.endpoint,
      until: new Date(p.until).toISOString(),
    })),
    faults: { ...ctx.faults.counts, revocations: ctx.issuer.revocations },
    writes: { ...ctx.writes },
    ext: ctx.ext.counts(),
    integrity: ctx.store.integritySnapshot(),
    memory: { rssBytes: mem.rss, heapUsedBytes: mem.heapUsed },
  };
}
