/**
 * What a CLI test against the platform needs: a sandbox holding `identities` synthetic identities
 * (none migrated yet), a database a CLI child process can reach with the same identities in its
 * source relation, and the env vars that point the CLI at the sandbox.
 *
 * @example
 *   const rig = await startCliRig(backends[0]!, { identities: 400, seed: 5 });
 *   await runCli(["plan", ...rig.target.args], rig.env);
 *   await rig.close();
 */

import type { Sandbox, SandboxOptions } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { loadSourceConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { seedSource } from "../../src/db/source/seed.ts";
import type { Backend, TestTarget } from "./db.ts";
import { codeFingerprint } from "./pglite-folder.ts";

/** The code a seeded source follows from: the seeding and the synthetic identities. */
const SEEDING_CODE = codeFingerprint("src/db/source", "src/contract");

export interface CliRig {
  readonly sandbox: Sandbox;
  readonly target: TestTarget;
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * A database a CLI child can reach, holding the tool's schema and the source relation (the
 * default, `identities`) seeded with `identities` synthetic identities of `seed` (and the seed's
 * anomalous rows with `withAnomalies`), as `seedSource` writes them. On PGlite a copy of a folder
 * seeded once for these arguments (no open of the database here: about 1.1 s of CPU each time).
 *
 * @example
 *   const target = await seededTarget(backend, { identities: 300, seed: 5 });
 */
export async function seededTarget(
  backend: Backend,
  o: { readonly identities: number; readonly seed: number; readonly withAnomalies?: boolean },
): Promise<TestTarget> {
  const seeding = {
    identities: o.identities,
    seed: o.seed,
    withAnomalies: o.withAnomalies === true,
  };
  const source = loadSourceConfig({}, {});
  return backend.target({
    migrated: true,
    prepared: {
      key: `${JSON.stringify(seeding)}, ${JSON.stringify(source)}, code ${SEEDING_CODE}`,
      build: async (db) => {
        await seedSource(db, source, seeding);
      },
    },
  });
}

export async function startCliRig(
  backend: Backend,
  o: { identities: number; seed: number; sandbox?: SandboxOptions },
): Promise<CliRig> {
  const sandbox = await startSandbox({
    port: 0,
    rateLimitRps: 0,
    tokenRateLimitRps: 0,
    ...o.sandbox,
  });
  sandbox.seedIdentities(syntheticIdentities(o.identities, o.seed), {
    migratedFraction: 0,
    seed: o.seed,
  });
  const target = await seededTarget(backend, o);
  return {
    sandbox,
    target,
    env: {
      API_BASE_URL: sandbox.apiUrl,
      OAUTH_TOKEN_URL: sandbox.tokenUrl,
      OAUTH_CLIENT_ID: sandbox.credentials.clientId,
      OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
    },
    close: async () => {
      await sandbox.close();
      await target.drop();
    },
  };
}
