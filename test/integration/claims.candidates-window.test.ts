/**
 * Issue 52: a PGlite plan of 10,000,000 identities spent over 20 minutes after its listing, in
 * the unlisted candidates past the source index's bound. Their query was an anti-join under a
 * limit, and PGlite (no statistics) merged each page against every claim of the run from the
 * first: quadratic in the candidates. `candidatesWindow` reads a window of candidates by id and
 * probes each one's claim by its key. These tests check what the windows return across windows
 * whose every candidate was claimed, that a window's plan reads no claim outside it, and that the
 * unlisted candidates are read by id in batches of at most the size asked, on both backends.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { candidatesWindow } from "../../src/db/journal/claim-queries.ts";
import { insertRun, newRunId } from "../../src/db/journal/run-queries.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import type { ListedClassifier } from "../../src/migration/classify/listed-classifier.ts";
import { classifyUnlisted } from "../../src/migration/classify/unlisted-candidates.ts";
import { SourceIndex } from "../../src/migration/read/source-index.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";
import { planOf, WatchStatements } from "../helpers/watch-statements.ts";

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

for (const backend of backends) {
  describe(`the unlisted candidates past the index's bound on ${backend.name}`, () => {
    let h: TestDatabase;

    before(async () => {
      h = await backend.open({ migrate: true });
    });
    after(async () => {
      await h.close();
    });

    /**
     * A run whose source pass kept `n` candidates (ids 0…n-1, every third one user-disabled, the
     * others admin-disabled) and, between them, rows that are not candidates; `claimed` ids are
     * claimed by a batch.
     */
    async function runWith(n: number, claimed: (i: number) => boolean): Promise<string> {
      const runId = newRunId();
      await insertRun(h.db, {
        id: runId,
        mode: "plan",
        parentRunId: null,
        options: {},
        toolVersion: "t",
      });
      const seqs: number[] = [];
      const ids: string[] = [];
      const valid: boolean[] = [];
      const user: boolean[] = [];
      const admin: boolean[] = [];
      for (let i = 0; i < n; i++) {
        // A candidate, then a valid row with no flag (odd ids: not candidates, never returned).
        seqs.push(2 * i + 1, 2 * i + 2);
        ids.push(id(2 * i), id(2 * i + 1));
        valid.push(true, true);
        user.push(i % 3 === 0, false);
        admin.push(i % 3 !== 0, false);
      }
      await sql`insert into ${sql.table(TOOL_TABLES.sourceRows)}
          (run_id, seq, identity_id, valid, user_disabled, admin_disabled)
        select ${runId}, * from unnest(${seqs}::int8[], ${ids}::text[], ${valid}::bool[],
          ${user}::bool[], ${admin}::bool[])`.execute(h.db);
      const claims = Array.from({ length: n }, (_, i) => i)
        .filter(claimed)
        .map((i) => id(2 * i));
      await sql`insert into ${sql.table(TOOL_TABLES.listedClaims)} (run_id, identity_id, batch)
        select ${runId}, c, 1 from unnest(${claims}::text[]) as c`.execute(h.db);
      return runId;
    }

    it("returns every unclaimed candidate, in id order, across windows whose every candidate was claimed", async () => {
      // 30 candidates; 0–19 and 25 claimed: the first five windows of 4 return none.
      const runId = await runWith(30, (i) => i < 20 || i === 25);
      const seen: string[] = [];
      const windows: number[] = [];
      let afterId: string | null = null;
      for (;;) {
        const w = await candidatesWindow(h.db, runId, afterId, 4);
        windows.push(w.unclaimed.length);
        seen.push(...w.unclaimed.map((c) => c.identity_id));
        for (const c of w.unclaimed) {
          const i = Number(c.identity_id.slice(-12)) / 2;
          assert.equal(c.user_disabled, i % 3 === 0, c.identity_id);
          assert.equal(c.admin_disabled, i % 3 !== 0, c.identity_id);
        }
        if (!w.full) break;
        afterId = w.last;
      }
      assert.deepEqual(windows, [0, 0, 0, 0, 0, 4, 3, 2]);
      const expected = [20, 21, 22, 23, 24, 26, 27, 28, 29].map((i) => id(2 * i));
      assert.equal(seen.length, expected.length);
      assert.deepEqual(seen, expected);
    });

    it("reads, in one window's statement, no claim outside that window", async () => {
      // 20,000 candidates, all claimed: an anti-join under a limit may merge against all of them.
      const runId = await runWith(20_000, () => true);
      const watch = new WatchStatements();
      const w = await candidatesWindow(h.db.withPlugin(watch), runId, id(2 * 15_000 - 2), 1000);
      assert.equal(w.unclaimed.length, 0);
      assert.equal(w.last, id(2 * 15_999));
      assert.equal(watch.nodes.length, 1);
      const plan = await planOf(h.db, watch.last(/./), "analyze, costs off, timing off");
      assert.ok(plan.length > 3, `a plan was read:\n${plan.join("\n")}`);
      // Claims read: each node that scans listed_claims, its rows times its loops.
      const claimScans = plan.filter((l) => l.includes("listed_claims"));
      assert.ok(claimScans.length > 0, `the plan scans the claims:\n${plan.join("\n")}`);
      let read = 0;
      for (const line of claimScans) {
        const m = /rows=(\d+) loops=(\d+)/.exec(line);
        assert.ok(m, `rows and loops in: ${line}`);
        read += Number(m[1]) * Number(m[2]);
      }
      assert.ok(read <= 1000, `claims read: ${read}, for a window of 1,000:\n${plan.join("\n")}`);
    });

    it("reads the unlisted candidates by id in batches of at most the size asked, past windows that held none", async () => {
      // 50 candidates, those of 0–29 and of every multiple of 7 claimed: 17 unclaimed.
      const runId = await runWith(50, (i) => i < 30 || i % 7 === 0);
      const batches: string[][] = [];
      let classified = 0;
      const classifier = {
        classify: async (observed: readonly unknown[]) => {
          classified += observed.length;
          return observed.length;
        },
      } as unknown as ListedClassifier;
      const result = await classifyUnlisted(
        { db: h.db, runId, index: new SourceIndex(0), pastBound: true, classifier },
        6,
        async (ids) => {
          batches.push([...ids]);
          return ids.map((i) => ({ status: "not_found" as const, id: i, error: "404" }));
        },
      );
      const expected = Array.from({ length: 50 }, (_, i) => i)
        .filter((i) => !(i < 30 || i % 7 === 0))
        .map((i) => id(2 * i));
      assert.equal(expected.length, 17);
      assert.deepEqual(
        batches.map((b) => b.length),
        [6, 6, 5],
      );
      assert.deepEqual(batches.flat(), expected);
      assert.equal(result.notFound, 17);
      assert.equal(result.found, 0);
      assert.equal(classified, 17);
    });
  });
}
