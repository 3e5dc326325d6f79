/**
 * Issue 52: statements that look a batch of ids up by key (`identity_id = any($ids)`) ran as a
 * scan of the whole run on PGlite, whose tables have no statistics until analysed: a plan past the
 * source index's bound claimed every listing page against all of the run's source rows, and a plan
 * of 10,000,000 identities did not finish in 20 minutes. They now run with sequential scans off
 * (`withKeyLookups`). These tests read the plan of each statement as the tool issues it, on a run
 * of 20,000 source rows analysed while it was empty, and check what they answer, on both backends.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { claimListed } from "../../src/db/journal/claim-queries.ts";
import { unclassifiedObservations } from "../../src/db/journal/finding-queries.ts";
import { candidatesAmong } from "../../src/db/journal/incremental-queries.ts";
import { withKeyLookups } from "../../src/db/journal/key-lookups.ts";
import { insertRun, newRunId } from "../../src/db/journal/run-queries.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";
import { planOf, textOf, WatchStatements } from "../helpers/watch-statements.ts";

const N = 20_000;
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
/** The run's tables that grow with it. */
const RUN_TABLES = /Seq Scan on (source_rows|listed_claims|snapshot_identities|findings)\b/;

/** Rows a plan's nodes read of `table`: each node on it, its rows and those its filter removed, times its loops. */
function rowsRead(plan: readonly string[], table: string): number {
  let read = 0;
  for (const [i, line] of plan.entries()) {
    if (!line.includes(` on ${table} `)) continue;
    const m = /rows=(\d+) loops=(\d+)/.exec(line);
    assert.ok(m, `rows and loops in: ${line}`);
    const loops = Number(m[2]);
    let rows = Number(m[1]);
    for (const next of plan.slice(i + 1)) {
      if (next.includes("->")) break;
      const removed = /Rows Removed by Filter: (\d+)/.exec(next);
      if (removed) rows += Number(removed[1]);
    }
    read += rows * loops;
  }
  return read;
}

for (const backend of backends) {
  describe(`lookups of a batch of ids by key on ${backend.name}`, () => {
    let h: TestDatabase;
    let runId: string;
    /** Ids asked: every tenth of the run's, 2,000 in all (a catch-up range). */
    const asked = Array.from({ length: N / 10 }, (_, i) => id(i * 10));

    before(async () => {
      h = await backend.open({ migrate: true });
      runId = newRunId();
      await insertRun(h.db, {
        id: runId,
        mode: "plan",
        parentRunId: null,
        options: {},
        toolVersion: "t",
      });
      // Statistics taken while the run's tables were empty, as a run's are.
      for (const t of ["sourceRows", "snapshotIdentities", "findings", "listedClaims"] as const) {
        await sql`analyze ${sql.table(TOOL_TABLES[t])}`.execute(h.db);
      }
      const ids = Array.from({ length: N }, (_, i) => id(i));
      const seqs = ids.map((_, i) => i + 1);
      const flagged = ids.map((_, i) => i % 2 === 0);
      await sql`insert into ${sql.table(TOOL_TABLES.sourceRows)}
          (run_id, seq, identity_id, valid, user_disabled, admin_disabled)
        select ${runId}, s, i, true, f, false
        from unnest(${seqs}::int8[], ${ids}::text[], ${flagged}::bool[]) as u(s, i, f)`.execute(
        h.db,
      );
      await sql`insert into ${sql.table(TOOL_TABLES.snapshotIdentities)}
          (run_id, identity_id, status, error, observed_at)
        select ${runId}, i, 'found', null, now() from unnest(${ids}::text[]) as i`.execute(h.db);
      await sql`analyze ${sql.table(TOOL_TABLES.sourceRows)}`.execute(h.db);
      await sql`analyze ${sql.table(TOOL_TABLES.snapshotIdentities)}`.execute(h.db);
    });
    after(async () => {
      await h.close();
    });

    /**
     * Runs `call` watched, and checks its statement that matches `pattern`: issued right after the
     * setting, and planned under it with no scan of a run's table. Answers the scans the same
     * statement plans without the setting.
     */
    async function plannedStatement(
      call: (db: typeof h.db) => Promise<unknown>,
      pattern: RegExp,
    ): Promise<string[]> {
      const watch = new WatchStatements();
      await call(h.db.withPlugin(watch));
      const node = watch.last(pattern);
      const at = watch.nodes.indexOf(node);
      assert.equal(
        textOf(watch.nodes[at - 1] as typeof node),
        "set local enable_seqscan = off",
        `issued right after the setting: ${watch.seen.join(" | ")}`,
      );
      const plan = await withKeyLookups(h.db, (trx) => planOf(trx, node));
      assert.ok(plan.length > 2, `a plan was read:\n${plan.join("\n")}`);
      assert.deepEqual(
        plan.filter((l) => RUN_TABLES.test(l)),
        [],
        `no scan of a run's table in:\n${plan.join("\n")}`,
      );
      return (await planOf(h.db, node)).filter((l) => RUN_TABLES.test(l));
    }

    /** What `read` answers in a transaction under the setting, rolled back after (an explain analyze writes). */
    async function rolledBack<T>(read: (trx: typeof h.db) => Promise<T>): Promise<T> {
      let out: T | undefined;
      await h.db
        .transaction()
        .execute(async (trx) => {
          out = await withKeyLookups(trx, read);
          throw new Error("rolled back");
        })
        .catch((err: unknown) => {
          if (!(err instanceof Error && err.message === "rolled back")) throw err;
        });
      return out as T;
    }

    it("claims a page's ids by their keys, with no scan of the run's source rows or claims, and answers each id's rows", async () => {
      const stored = asked.map(() => false);
      const unset = await plannedStatement(
        (db) => claimListed(db, runId, 1, asked.slice(0, 10), stored.slice(0, 10)),
        /^with u as/,
      );
      // Left to its estimates, the planner scans the run's claims: the hazard is real.
      assert.ok(unset.length > 0, "without the setting, a scan of a run's table is planned");
      const answers = await claimListed(h.db, runId, 2, asked, stored);
      assert.equal(answers.length, asked.length);
      for (const a of answers) {
        assert.equal(a.rows, 1, a.identity_id);
        assert.equal(a.user_disabled, Number(a.identity_id.slice(-12)) % 2 === 0, a.identity_id);
      }
      const claimedNow = answers.filter((a) => a.claimed).length;
      // Batch 1 claimed the first ten (above); batch 2 claims the rest, not those ten.
      assert.equal(claimedNow, asked.length - 10);
    });

    it("reads, for a page's claims, no claim or source row of the run beyond the page's own ids, though the run holds 20,000 of each", async () => {
      const other = newRunId();
      await insertRun(h.db, {
        id: other,
        mode: "plan",
        parentRunId: null,
        options: {},
        toolVersion: "t",
      });
      await sql`analyze ${sql.table(TOOL_TABLES.listedClaims)}`.execute(h.db);
      await sql`insert into ${sql.table(TOOL_TABLES.sourceRows)}
          (run_id, seq, identity_id, valid, user_disabled, admin_disabled)
        select ${other}, seq, identity_id, valid, user_disabled, admin_disabled
        from ${sql.table(TOOL_TABLES.sourceRows)} where run_id = ${runId}`.execute(h.db);
      const all = Array.from({ length: N }, (_, i) => id(i));
      await claimListed(
        h.db,
        other,
        1,
        all.slice(0, N / 2),
        all.slice(0, N / 2).map(() => true),
      );
      await claimListed(
        h.db,
        other,
        2,
        all.slice(N / 2),
        all.slice(N / 2).map(() => true),
      );
      const watch = new WatchStatements();
      const page = asked.slice(0, 500);
      const answers = await claimListed(
        h.db.withPlugin(watch),
        other,
        3,
        page,
        page.map(() => true),
      );
      assert.equal(answers.length, page.length);
      assert.equal(answers.filter((a) => a.claimed).length, 0, "claimed by batches 1 and 2 before");
      const plan = await rolledBack((trx) =>
        planOf(trx, watch.last(/^with u as/), "analyze, costs off, timing off"),
      );
      assert.ok(plan.length > 3, `a plan was read:\n${plan.join("\n")}`);
      for (const table of ["listed_claims", "source_rows"]) {
        const read = rowsRead(plan, table);
        assert.ok(
          read <= 2 * page.length,
          `${table} read: ${read}, for a page of ${page.length}:\n${plan.join("\n")}`,
        );
      }
    });

    it("reads what the snapshot holds of a range with no scan of the run's snapshot or findings", async () => {
      const call = (db: typeof h.db) => unclassifiedObservations(db, runId, asked);
      await plannedStatement(call, /^select distinct f\.identity_id/);
      await plannedStatement(call, /^select si\.identity_id/);
      const rows = await unclassifiedObservations(h.db, runId, asked);
      assert.equal(rows.length, asked.length);
      assert.deepEqual(
        rows.map((r) => r.identity_id),
        asked,
      );
    });

    it("tells which ids are candidates with no scan of the run's source rows", async () => {
      await plannedStatement(
        (db) => candidatesAmong(db, runId, asked),
        /^select distinct identity_id/,
      );
      const candidates = await candidatesAmong(h.db, runId, [...asked, id(1), id(3)]);
      assert.equal(candidates.size, asked.length);
      assert.ok(!candidates.has(id(1)) && !candidates.has(id(3)));
    });

    it("sets scans back to their default after a statement in a caller's transaction", async () => {
      const after = await h.db.transaction().execute(async (trx) => {
        await withKeyLookups(trx, (t) => sql`select 1`.execute(t));
        return (await sql<{ enable_seqscan: string }>`show enable_seqscan`.execute(trx)).rows[0];
      });
      assert.deepEqual(after, { enable_seqscan: "on" });
    });
  });
}
