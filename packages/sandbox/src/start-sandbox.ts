import type { AddressInfo } from "node:net";
import { adminApi } from "./admin/admin-api.ts";
import { buildApp } from "./app.ts";
import { createContext } from "./context.ts";
import { depositAddressApi } from "./deposit-address/deposit-address-api.ts";
import { exchangeApi } from "./exchange/exchange-api.ts";
import { normalizeEndpointRates } from "./gateway/endpoint-limits.ts";
import { stripUndefined } from "./gateway/faults.ts";
import { startAutoMigrate } from "./identity/auto-migrate.ts";
import { identityApi } from "./identity/identity-api.ts";
import { syntheticSeedRows } from "./identity/identity-seed.ts";
import type { SeedIdentity } from "./identity/types.ts";
import {
  checkLimits,
  checkStartOptions,
  DEFAULT_LIMITS,
  defaultClients,
  pickCredentials,
  pickLimits,
} from "./options.ts";
import { orchestrationApi } from "./orchestration/orchestration-api.ts";
import { ADMIN_PREFIX, TOKEN_PATH } from "./paths.ts";
import { transferApi } from "./transfer/transfer-api.ts";
import type { Limits, Sandbox, SandboxOptions } from "./types.ts";

const hostForUrl = (host: string) => (host.includes(":") ? `[${host}]` : host);

/**
 * Starts a local emulator of the platform's interface: OAuth2 client credentials, identities and
 * controls with the platform's rules, quote executions, orders, internal transfers with balances,
 * deposit addresses and orchestration rules, per-endpoint rate limits with penalties, fault
 * injection, and an admin surface under /__sandbox. Bound to 127.0.0.1 and an OS-chosen
 * port by default, so tests can run many at once. The handle's methods are the domains' seeding
 * APIs and the admin controls, over the same context the routes use.
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
  const clients = options.clients ?? defaultClients();
  const ctx = createContext(options, limits, clients);
  const app = buildApp(ctx);
  const identities = identityApi(ctx);
  if (options.identities) {
    const rows = syntheticSeedRows(options.identities, ctx.seedDefaults.seed);
    identities.seedIdentities(rows as Iterable<SeedIdentity>);
  }
  const host = options.host ?? "127.0.0.1";
  await app.listen({ host, port: options.port ?? 0 });
  let migrator = options.autoMigrateRate ? startAutoMigrate(ctx, options.autoMigrateRate) : null;
  const { port } = app.server.address() as AddressInfo;
  const base = `http://${hostForUrl(host)}:${port}`;
  return Object.freeze({
    apiUrl: base,
    tokenUrl: `${base}${TOKEN_PATH}`,
    adminUrl: `${base}${ADMIN_PREFIX}`,
    credentials: pickCredentials(clients),
    ...identities,
    ...exchangeApi(ctx),
    ...transferApi(ctx),
    ...depositAddressApi(ctx),
    ...orchestrationApi(ctx),
    ...adminApi(ctx),
    migrateAtRate(rate: number) {
      checkStartOptions({ autoMigrateRate: rate });
      migrator?.stop();
      migrator = rate > 0 ? startAutoMigrate(ctx, rate) : null;
      if (!migrator) ctx.autoMigrate.rate = 0;
    },
    async close() {
      migrator?.stop();
      for (const s of ctx.hanging) s.destroy();
      ctx.hanging.clear();
      await app.close();
    },
  });
}
