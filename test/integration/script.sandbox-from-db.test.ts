import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { spawnReady } from "controls-sandbox/test-helpers";
import { sql } from "kysely";
import { loadSourceConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { seedSource } from "../../src/db/source/seed.ts";
import { collect } from "../helpers/cli.ts";
import { backends } from "../helpers/db.ts";

const LONG_ID = `long-${"x".repeat(251)}`;
const SCRIPT = [fileURLToPath(new URL("../../scripts/sandbox-from-db.ts", import.meta.url))];
const cwd = mkdtempSync(join(tmpdir(), "controls-sandbox-from-db-"));
after(() => rmSync(cwd, { recursive: true, force: true }));

/** Runs the script to its end (for refusals). */
function runScript(args: readonly string[]) {
  const child = spawn(process.execPath, [...SCRIPT, ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return collect(child).finally(() => clearTimeout(timer));
}

describe("npm run sandbox:from-db (scripts/sandbox-from-db.ts)", () => {
  for (const backend of backends) {
    it(`serves the valid identities of the source relation, the 256-character id included, on ${backend.name}`, async () => {
      const target = await backend.target();
      try {
        const handle = await target.open();
        let nonUuid = 0;
        try {
          const seeded = await seedSource(handle.db, loadSourceConfig({}), {
            identities: 300,
            seed: 8,
            withAnomalies: true,
          });
          // Non-UUID ids are only a warning under the default --non-uuid-ids warn: still served.
          nonUuid = seeded.anomalies.non_uuid_id ?? 0;
          assert.ok(Object.keys(seeded.anomalies).length > 1);
          // The tool takes ids of up to 256 characters; the sandbox serves them too.
          await sql`insert into identities (id, user_disabled, admin_disabled) values (${LONG_ID}, true, false)`.execute(
            handle.db,
          );
        } finally {
          await handle.close();
        }
        const proc = await spawnReady(
          [...SCRIPT, "--port", "0", "--migrated-fraction", "1", ...target.args],
          cwd,
          60_000,
        );
        try {
          const stats = (await (await fetch(`${proc.info.admin_url}/stats`)).json()) as {
            identities: number;
            controls: { active: number };
          };
          const expected = [...syntheticIdentities(300, 8)];
          assert.equal(
            stats.identities,
            300 + nonUuid + 1,
            "rejected rows (null, duplicate...) left out, the 256-character id served",
          );
          const flags = expected.reduce(
            (n, r) => n + Number(r.user_disabled) + Number(r.admin_disabled),
            0,
          );
          assert.equal(
            stats.controls.active,
            flags + nonUuid + 1,
            "every flagged identity migrated",
          );
          const long = await fetch(`${proc.info.admin_url}/identities/${LONG_ID}/controls`);
          assert.equal(long.status, 200);
          assert.match(proc.stderr(), /skipped_anomalous_rows/);
          for (const r of expected.slice(0, 20)) {
            const res = await fetch(`${proc.info.admin_url}/identities/${r.id}/controls`);
            assert.equal(res.status, 200, `identity ${r.id} was seeded`);
          }
        } finally {
          assert.equal(await proc.stop(), 0);
        }
      } finally {
        await target.drop();
      }
    });

    it(`with no source table, exits 1 with a hint to run db seed, on ${backend.name}`, async () => {
      const target = await backend.target();
      try {
        const run = await runScript(["--port", "0", ...target.args]);
        assert.equal(run.code, 1, run.stderr);
        assert.match(run.stderr, /Relation "identities" not found/);
        assert.match(run.stderr, /controls-migrate db seed --identities/);
        assert.equal(run.stdout, "", "no ready line");
      } finally {
        await target.drop();
      }
    });
  }

  it("refuses --identities, which only the bin takes, naming it", async () => {
    const run = await runScript(["--port", "0", "--identities", "5"]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /identities/);
    assert.equal(run.stdout, "");
  });
});
