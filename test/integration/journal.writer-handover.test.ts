/**
 * The hand-over between two writers: a writer that takes the lock waits out the second in which the
 * one before it may still have sent (a killed apply its resume follows, an interrupted reconcile).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { claimRun, insertRun, newRunId } from "../../src/db/journal/run-queries.ts";
import { handover, lastWriter, recordClosingSends } from "../../src/db/journal/writer-handover.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";

const NOW = Date.parse("2026-11-29T09:00:00Z");
const HEARTBEAT = 10_000;
const GUARD = 20;

const SENDS = { "/v2/identity/controls": [NOW - 400, NOW - 200] };

describe("handover", () => {
  it("is nothing when no writer ran before", () => {
    assert.equal(handover(undefined, NOW, HEARTBEAT, GUARD), null);
  });

  it("counts a finished writer's closing sends in the next one's cap, with no wait of its own", () => {
    const last = { finishedAt: new Date(NOW - 100), aliveAt: new Date(NOW - 5000) };
    assert.deepEqual(handover({ ...last, closingSends: SENDS }, NOW, HEARTBEAT, GUARD), {
      sends: SENDS,
    });
  });

  it("holds a second and the guard past the finish of a writer that recorded no sends, never past now plus that", () => {
    const finished = (ms: number) => ({
      finishedAt: new Date(ms),
      aliveAt: new Date(ms - 5000),
      closingSends: null,
    });
    assert.deepEqual(handover(finished(NOW - 300), NOW, HEARTBEAT, GUARD), {
      holdUntil: NOW + 720,
    });
    assert.equal(handover(finished(NOW - 60_000), NOW, HEARTBEAT, GUARD), null);
    assert.deepEqual(handover(finished(NOW + 90_000), NOW, HEARTBEAT, GUARD), {
      holdUntil: NOW + 1020,
    });
  });

  it("holds a full second from now after a writer that died within its heartbeat's interval, and not at all after one long dead", () => {
    const died = (aliveMs: number) => ({
      finishedAt: null,
      aliveAt: new Date(aliveMs),
      closingSends: null,
    });
    assert.deepEqual(handover(died(NOW - 9_000), NOW, HEARTBEAT, GUARD), { holdUntil: NOW + 1020 });
    assert.deepEqual(handover(died(NOW - 10_500), NOW, HEARTBEAT, GUARD), {
      holdUntil: NOW + 1020,
    });
    assert.equal(handover(died(NOW - 12_000), NOW, HEARTBEAT, GUARD), null);
  });
});

for (const backend of backends) {
  describe(`the last writer on ${backend.name}`, () => {
    let h: TestDatabase;
    before(async () => {
      h = await backend.open({ migrate: true });
    });
    after(async () => {
      await h.close();
    });

    async function run(
      mode: "plan" | "apply" | "revert",
      at: Partial<Record<string, Date | null>>,
    ) {
      const id = newRunId();
      await insertRun(h.db, { id, mode, parentRunId: null, options: {}, toolVersion: "test" });
      await h.db.updateTable(TOOL_TABLES.runs).set(at).where("id", "=", id).execute();
      return id;
    }

    it("is the writer whose last sign of life is the latest, a plan never, with its finish or else its heartbeat", async () => {
      assert.equal(await lastWriter(h.db), undefined);
      await run("apply", {
        started_at: new Date(NOW - 60_000),
        heartbeat_at: new Date(NOW - 50_000),
        finished_at: new Date(NOW - 40_000),
      });
      await run("plan", { started_at: new Date(NOW - 1000), heartbeat_at: new Date(NOW) });
      await run("revert", {
        started_at: new Date(NOW - 90_000),
        heartbeat_at: new Date(NOW - 2_000),
        finished_at: null,
      });
      assert.deepEqual(await lastWriter(h.db), {
        finishedAt: null,
        aliveAt: new Date(NOW - 2_000),
        closingSends: null,
      });
    });

    it("gives back the closing sends a process recorded, and forgets them when a resume claims the run again", async () => {
      const id = await run("apply", {
        started_at: new Date(NOW),
        heartbeat_at: new Date(NOW + 1000),
        finished_at: new Date(NOW + 2000),
      });
      await recordClosingSends(h.db, id, SENDS);
      assert.deepEqual((await lastWriter(h.db))?.closingSends, SENDS);
      await claimRun(h.db, id);
      assert.equal((await lastWriter(h.db))?.closingSends, null);
    });
  });
}
