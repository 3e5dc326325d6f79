/**
 * Issue 52: the executor's journal writes (`markInFlight`, `updateAction`) that arrive while one
 * statement runs go together in the next, on both backends; each caller's write is committed when
 * its promise settles, the writes of one action keep their order, and a patch's undefined fields
 * leave their columns as they are.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { markInFlight, updateAction } from "../../src/db/journal/journal-queries.ts";
import { insertRun, newRunId } from "../../src/db/journal/run-queries.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";
import { WatchStatements } from "../helpers/watch-statements.ts";

for (const backend of backends) {
  describe(`journal writes on ${backend.name}`, () => {
    let h: TestDatabase;
    let runId: string;
    before(async () => {
      h = await backend.open({ migrate: true });
      runId = newRunId();
      await insertRun(h.db, {
        id: runId,
        mode: "apply",
        parentRunId: null,
        options: {},
        toolVersion: "t",
      });
    });
    after(async () => {
      await h.close();
    });

    async function pending(n: number, tag: string): Promise<number[]> {
      const rows = await h.db
        .insertInto(TOOL_TABLES.actions)
        .values(
          Array.from({ length: n }, (_, i) => ({
            run_id: runId,
            identity_id: `${tag}-${i}`,
            finding_id: null,
            action: "create" as const,
            control_type: "SELL_ONLY",
            control_key: "SELL_ONLY:client",
            status: "pending" as const,
          })),
        )
        .returning("id")
        .execute();
      assert.equal(rows.length, n);
      return rows.map((r) => r.id);
    }

    async function rows(ids: readonly number[]) {
      const r = await h.db
        .selectFrom(TOOL_TABLES.actions)
        .selectAll()
        .where("id", "in", [...ids])
        .orderBy("id")
        .execute();
      assert.equal(r.length, ids.length);
      return r;
    }

    it("marks 200 actions in flight at once in fewer statements than actions, each committed when its promise settles", async () => {
      const ids = await pending(200, "a");
      const counter = new WatchStatements();
      const db = h.db.withPlugin(counter);
      const settled: number[] = [];
      await Promise.all(
        ids.map(async (id) => {
          await markInFlight(db, id);
          // Committed: another connection's read (PostgreSQL) or the next statement sees it.
          const row = await h.db
            .selectFrom(TOOL_TABLES.actions)
            .select(["status", "attempts"])
            .where("id", "=", id)
            .executeTakeFirstOrThrow();
          assert.deepEqual(row, { status: "in_flight", attempts: 1 });
          settled.push(id);
        }),
      );
      assert.equal(settled.length, 200);
      assert.ok(counter.updates() >= 1, "at least one statement ran");
      assert.ok(
        counter.updates() < 200,
        `200 writes that arrived together took ${counter.updates()} statements`,
      );
      for (const r of await rows(ids)) {
        assert.equal(r.status, "in_flight");
        assert.equal(r.attempts, 1);
      }
    });

    it("writes each action's own outcome when patches of the same columns share a statement", async () => {
      const ids = await pending(50, "b");
      await Promise.all(
        ids.map((id, i) =>
          updateAction(h.db, id, {
            status: i % 2 === 0 ? "succeeded" : "failed",
            outcome: i % 2 === 0 ? "created" : "refused",
            http_status: 200 + i,
            error: i % 2 === 0 ? null : `refused ${i}`,
            result_control_id: i % 2 === 0 ? `control-${i}` : null,
          }),
        ),
      );
      const got = await rows(ids);
      got.forEach((r, i) => {
        assert.equal(r.status, i % 2 === 0 ? "succeeded" : "failed", `action ${i}`);
        assert.equal(r.outcome, i % 2 === 0 ? "created" : "refused");
        assert.equal(r.http_status, 200 + i);
        assert.equal(r.error, i % 2 === 0 ? null : `refused ${i}`);
        assert.equal(r.result_control_id, i % 2 === 0 ? `control-${i}` : null);
      });
    });

    it("keeps one action's writes in order when they are queued behind other writes", async () => {
      const ids = await pending(30, "c");
      const [target] = ids as [number];
      const counter = new WatchStatements();
      const db = h.db.withPlugin(counter);
      // Without waiting in between. The first write goes alone; while it runs the rest queue:
      // patches of other actions, the target's in_flight, then the target's outcome, a patch of
      // the same columns as the others. The outcome must wait for a statement after its in_flight.
      const writes = [
        markInFlight(db, ids[2] as number),
        ...ids.slice(3).map((id) => updateAction(db, id, { status: "skipped", outcome: "x" })),
        updateAction(db, ids[1] as number, { status: "skipped", outcome: "x" }),
        markInFlight(db, target),
        updateAction(db, target, { status: "succeeded", outcome: "created" }),
        markInFlight(db, ids[1] as number),
      ];
      await Promise.all(writes);
      const [t, second] = await rows([target, ids[1] as number]);
      assert.deepEqual([t?.status, t?.outcome, t?.attempts], ["succeeded", "created", 1]);
      assert.deepEqual([second?.status, second?.outcome, second?.attempts], ["in_flight", "x", 1]);
      assert.ok(
        counter.updates() < writes.length,
        `${writes.length} writes, ${counter.updates()} statements`,
      );
    });

    it("leaves a column alone when the patch's field is undefined, batched or not", async () => {
      const ids = await pending(3, "d");
      await Promise.all(ids.map((id) => updateAction(h.db, id, { outcome: "kept", error: "e" })));
      await Promise.all(
        ids.map((id) =>
          updateAction(h.db, id, { status: "succeeded", outcome: undefined, error: null }),
        ),
      );
      for (const r of await rows(ids)) {
        assert.deepEqual([r.status, r.outcome, r.error], ["succeeded", "kept", null]);
      }
    });

    it("fails every write of a statement that fails, and the next writes go on", async () => {
      const ids = await pending(4, "e");
      const results = await Promise.allSettled(
        ids.map((id) => updateAction(h.db, id, { status: "no-such-status" as "failed" })),
      );
      assert.equal(results.length, 4);
      assert.ok(
        results.every((r) => r.status === "rejected"),
        "the status check refuses each",
      );
      await Promise.all(ids.map((id) => updateAction(h.db, id, { status: "skipped" })));
      for (const r of await rows(ids)) assert.equal(r.status, "skipped");
    });

    it("writes inside a transaction at once, on the transaction, and rolls back with it", async () => {
      const [id] = (await pending(1, "f")) as [number];
      await assert.rejects(
        h.db.transaction().execute(async (trx) => {
          await updateAction(trx, id, { status: "succeeded", outcome: "in-trx" });
          const seen = await trx
            .selectFrom(TOOL_TABLES.actions)
            .select("outcome")
            .where("id", "=", id)
            .executeTakeFirstOrThrow();
          assert.equal(seen.outcome, "in-trx");
          throw new Error("roll back");
        }),
        /roll back/,
      );
      const [r] = await rows([id]);
      assert.deepEqual([r?.status, r?.outcome], ["pending", null]);
      await sql`select 1`.execute(h.db);
    });
  });
}
