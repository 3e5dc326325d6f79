/**
 * Issue 51 §1: a run is bound to the source relation its text resolved to when it started, not to
 * the text. A resume whose search_path names another relation with the same text (the URL's
 * `options`, `PGOPTIONS`, the database's default) is refused naming both relations, before anything
 * is read or sent; resumed where it started, it leaves no candidate without its control.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { type CliResult, collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";

const N = 300;
const SEED = 5151;
const flagged = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).map((r) => r.id);

/** The other relation, of the same text in another schema, empty: its flags look all cleared. */
async function createOtherRelation(rig: CliRig): Promise<void> {
  const h = await rig.target.open();
  try {
    await sql`create schema other`.execute(h.db);
    await sql`create table other.identities (like public.identities including all)`.execute(h.db);
  } finally {
    await h.close();
  }
}

/** Runs statements on the test database between two CLI runs. */
async function onDatabase(rig: CliRig, ...statements: string[]): Promise<void> {
  const h = await rig.target.open();
  try {
    for (const s of statements) await sql.raw(s).execute(h.db);
  } finally {
    await h.close();
  }
}

function assertRefused(r: CliResult, now = /this invocation's other\.identities \(oid \d+/): void {
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /the run's public\.identities \(oid \d+/, r.stderr);
  assert.match(r.stderr, now, r.stderr);
  assert.match(r.stderr, /the run stays resumable/);
  assert.doesNotMatch(r.stderr, /skipped:source_changed/);
}

backends.forEach((backend) => {
  describe(`a resume bound to its source relation on ${backend.name}`, () => {
    let rig: CliRig;
    let out: string;
    let n = 0;
    const outArgs = () => ["--no-progress", "--out", join(out, String(++n))];

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      await createOtherRelation(rig);
      out = mkdtempSync(join(tmpdir(), "resume-source-"));
    });
    after(async () => {
      await rig.close();
      rmSync(out, { recursive: true, force: true });
    });

    it("refuses a resume whose search_path names another relation, naming both, then resumes at its own with 0 missing", async () => {
      const { sandbox, target, env } = rig;
      const child = spawnCli(["apply", "--yes", "--rate", "10", ...outArgs(), ...target.args], env);
      const done = collect(child);
      const end = Date.now() + 120_000;
      while (sandbox.stats().writes.creates < 3 && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 10));
      }
      child.kill("SIGTERM");
      const stopped = await done;
      assert.equal(stopped.code, 130, stopped.stderr);
      const runId = /Run (\S+) \(apply\) started/.exec(stopped.stderr)?.[1];
      assert.ok(runId, stopped.stderr);
      const sent = sandbox.stats().writes.creates;
      const resume = (args: readonly string[], more: Record<string, string> = {}) =>
        runCli(["apply", "--resume", runId, "--yes", ...outArgs(), ...args], { ...env, ...more });

      if (backend.name === "postgres") {
        const url = target.args[1]!;
        const withOptions = `${url}${url.includes("?") ? "&" : "?"}options=-csearch_path%3Dother`;
        assertRefused(await resume(["--database-url", withOptions]));
        assertRefused(await resume(target.args, { PGOPTIONS: "-c search_path=other" }));
        const db = /\/([^/?]+)(\?|$)/.exec(new URL(url).pathname)?.[1];
        await onDatabase(rig, `alter database "${db}" set search_path = other`);
        assertRefused(await resume(target.args));
        await onDatabase(rig, `alter database "${db}" reset search_path`);
      }
      // The same text, the same schema, another relation: the table was replaced meanwhile.
      await onDatabase(
        rig,
        "alter table public.identities rename to identities_kept",
        "create table public.identities (like public.identities_kept including all)",
      );
      assertRefused(await resume(target.args), /this invocation's public\.identities \(oid \d+/);
      await onDatabase(
        rig,
        "drop table public.identities",
        "alter table public.identities_kept rename to identities",
      );
      assert.equal(sandbox.stats().writes.creates, sent, "nothing was sent by a refused resume");

      const resumed = await resume(target.args);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stderr, /source public\.identities:/);
      const missing = flagged.filter(
        (id) =>
          !sandbox
            .controlsOf(id)
            .some((c) => c.type === "SELL_ONLY" && /CLIENT/.test(c.set_by) && c.is_overridable),
      );
      assert.ok(flagged.length > 0);
      assert.deepEqual(missing, [], "every flagged identity holds its client SELL_ONLY");
      assert.equal(sandbox.stats().integrity.identitiesWithDuplicateClientSellOnly, 0);
    });

    it("refuses apply --plan of a plan whose source relation resolves elsewhere now, naming both, exit 1", async (t) => {
      if (backend.name !== "postgres") {
        t.skip(
          "PGlite takes no search_path from outside (no URL options, PGOPTIONS or role defaults)",
        );
        return;
      }
      const { target, env } = rig;
      const plan = await runCli(["plan", ...outArgs(), ...target.args], env);
      assert.ok(plan.code === 0 || plan.code === 2, plan.stderr);
      const planId = /Run (\S+) \(plan\) started/.exec(plan.stderr)?.[1];
      assert.ok(planId, plan.stderr);
      const refused = await runCli(
        ["apply", "--plan", planId, "--yes", ...outArgs(), ...target.args],
        {
          ...env,
          PGOPTIONS: "-c search_path=other",
        },
      );
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, new RegExp(`--plan ${planId}: the plan was made against`));
      assert.match(refused.stderr, /the plan's public\.identities \(oid \d+/);
      assert.match(refused.stderr, /this invocation's other\.identities \(oid \d+/);
    });
  });
});
