/**
 * A chaos workload: an in-process sandbox and a fresh database whose source relation describe the
 * same synthetic identities (same count and seed), with no control migrated yet, so `apply` has
 * one create to do per user_disabled identity.
 *
 * @example
 *   const w = await startWorkload(backend, { identities: 50_000, seed: 7, sandbox: { failRate: 0.1 } });
 *   await runCli(["apply", "--yes", ...w.target.args], w.env);
 *   await w.close();
 */

import { type Sandbox, type SandboxOptions, startSandbox } from "controls-sandbox";
import { loadSourceConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { seedSource } from "../../src/db/source/seed.ts";
import type { Backend, TestTarget } from "../helpers/db.ts";

export interface Workload {
  readonly sandbox: Sandbox;
  readonly target: TestTarget;
  /** Platform settings for the CLI (the secret goes by env, never by flag). */
  readonly env: Record<string, string>;
  readonly identities: number;
  /** The identities that must end with exactly one active client SELL_ONLY. */
  readonly expectedClient: readonly string[];
  /** Identities with admin_disabled true (their SERVICE control stays missing: report only). */
  readonly adminDisabled: number;
  /** Identities with any flag true: the source candidates. */
  readonly candidates: number;
  close(): Promise<void>;
}

export interface WorkloadOptions {
  readonly identities: number;
  readonly seed: number;
  /** Faults and limits of the sandbox; loopback and an OS-chosen port are always used. */
  readonly sandbox?: SandboxOptions;
}

export async function startWorkload(backend: Backend, opts: WorkloadOptions): Promise<Workload> {
  const rows = [...syntheticIdentities(opts.identities, opts.seed)];
  const sandbox = await startSandbox({
    tokenRateLimitRps: 0,
    rateLimitRps: 0,
    faultSeed: opts.seed,
    ...opts.sandbox,
    host: "127.0.0.1",
    port: 0,
  });
  let target: TestTarget | undefined;
  try {
    sandbox.seedIdentities(rows, { migratedFraction: 0, driftFraction: 0, seed: opts.seed });
    target = await backend.target();
    const h = await target.open({ migrate: true });
    try {
      await seedSource(h.db, loadSourceConfig({}, {}), {
        identities: opts.identities,
        seed: opts.seed,
      });
    } finally {
      await h.close();
    }
  } catch (err) {
    await sandbox.close();
    await target?.drop();
    throw err;
  }
  const t = target;
  return {
    sandbox,
    target: t,
    env: {
      API_BASE_URL: sandbox.apiUrl,
      OAUTH_TOKEN_URL: sandbox.tokenUrl,
      OAUTH_CLIENT_ID: sandbox.credentials.clientId,
      OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
      // Crash safety of creates is what chaos tests: create at once, without waiting for the
      // platform's own migration of identities whose legacy field is set there too.
      CONTROLS_WAIT_FOR_PLATFORM: "false",
    },
    identities: opts.identities,
    expectedClient: rows.filter((r) => r.user_disabled).map((r) => r.id),
    adminDisabled: rows.filter((r) => r.admin_disabled).length,
    candidates: rows.filter((r) => r.user_disabled || r.admin_disabled).length,
    async close() {
      await sandbox.close();
      await t.drop();
    },
  };
}
