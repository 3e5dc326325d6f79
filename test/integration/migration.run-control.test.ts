/**
 * The running writer's side of steering (`run-control.ts`) on a real database: the daily window of
 * --pause-outside, the throttle file, and a pause/continue/set-rate recorded by another process.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { loadPlatformConfig } from "../../src/config.ts";
import { parseDailyWindow } from "../../src/daily-window.ts";
import {
  getRunControl,
  listRunEvents,
  requestRunControl,
} from "../../src/db/journal/run-control-queries.ts";
import { insertRun, newRunId } from "../../src/db/journal/run-queries.ts";
import { silentLogger } from "../../src/log.ts";
import { RunControl } from "../../src/migration/steer/run-control.ts";
import {
  createPlatformClient,
  PATHS,
  type PlatformClient,
  READ_SCOPES,
} from "../../src/platform/index.ts";
import { backends, type TestDatabase } from "../helpers/db.ts";
import { waitFor } from "../helpers/wait-for.ts";

const env = {
  API_BASE_URL: "http://127.0.0.1:9",
  OAUTH_TOKEN_URL: "http://127.0.0.1:9/oauth2/token",
  OAUTH_CLIENT_ID: "client-1",
  OAUTH_CLIENT_SECRET: "s3cret-value-xyz",
};
const me = { who: "ana@ops1", pid: 4242 };

for (const backend of backends) {
  describe(`run control on ${backend.name}`, () => {
    let h: TestDatabase;
    let client: PlatformClient;
    let dir: string;
    before(async () => {
      h = await backend.open({ migrate: true });
      // A real client; nothing here sends a request (only its rate budget is set and read).
      client = createPlatformClient(loadPlatformConfig({}, env), {
        scopes: READ_SCOPES,
        logger: silentLogger,
      });
      dir = mkdtempSync(join(tmpdir(), "cm-control-"));
    });
    after(async () => {
      await client.close();
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    });

    async function newRun(): Promise<string> {
      const id = newRunId();
      await insertRun(h.db, {
        id,
        mode: "apply",
        parentRunId: null,
        options: {},
        toolVersion: "t",
      });
      return id;
    }

    it("outside the --pause-outside window writes are held and the hold is recorded; inside they flow", async () => {
      const runId = await newRun();
      const window = parseDailyWindow("22:00-06:00");
      assert.ok(typeof window === "object");
      let now = new Date(2026, 10, 23, 12, 0);
      const control = await RunControl.start({
        db: h.db,
        runId,
        client,
        logger: silentLogger,
        rate: 40,
        concurrency: 8,
        hold: { pauseOutside: window, throttleFile: undefined },
        now: () => now,
      });
      try {
        assert.equal(control.gate.isOpen, false);
        assert.match(control.gate.holds.join(), /outside the write window 22:00-06:00/);
        now = new Date(2026, 10, 23, 23, 30);
        await waitFor("the window to open", () => control.gate.isOpen);
      } finally {
        await control.stop();
      }
      const kinds = (await listRunEvents(h.db, runId)).map((e) => [e.kind, e.detail]);
      assert.deepEqual(kinds, [
        ["window_closed", "22:00-06:00"],
        ["window_open", "22:00-06:00"],
      ]);
    });

    it("while the throttle file exists writes are held; removing it lets them flow", async () => {
      const runId = await newRun();
      const file = join(dir, `throttle-${runId}`);
      const control = await RunControl.start({
        db: h.db,
        runId,
        client,
        logger: silentLogger,
        rate: 40,
        concurrency: 8,
        hold: { throttleFile: file, pauseOutside: undefined },
      });
      try {
        assert.equal(control.gate.isOpen, true);
        writeFileSync(file, "");
        await waitFor("the hold", () => !control.gate.isOpen);
        rmSync(file);
        await waitFor("the release", () => control.gate.isOpen);
      } finally {
        await control.stop();
      }
      const kinds = (await listRunEvents(h.db, runId)).map((e) => e.kind);
      assert.deepEqual(kinds, ["throttle_on", "throttle_off"]);
    });

    it("a pause, continue and set-rate recorded by another process are applied within a poll and acknowledged", async () => {
      const runId = await newRun();
      const control = await RunControl.start({
        db: h.db,
        runId,
        client,
        logger: silentLogger,
        rate: 40,
        concurrency: 8,
        hold: { throttleFile: undefined, pauseOutside: undefined },
      });
      const acked = async (v: number) =>
        ((await getRunControl(h.db, runId))?.applied_version ?? 0) >= v;
      try {
        const v1 = await requestRunControl(h.db, runId, { kind: "pause" }, me);
        await waitFor("the pause", () => acked(v1));
        assert.equal(control.gate.isOpen, false);
        assert.match(control.gate.holds.join(), /paused by ana@ops1 \(pid 4242\)/);
        const v2 = await requestRunControl(h.db, runId, { kind: "set_rate", rate: 5 }, me);
        await waitFor("the rate", () => acked(v2));
        assert.equal(client.metrics().budgets[PATHS.controls]?.rate, 5);
        assert.equal(control.liveReport().rate_budget, 5);
        assert.equal(control.budget(), 5, "the progress line's cap is the budget in force at once");
        assert.equal(control.gate.isOpen, false, "a rate change does not continue a paused run");
        const v3 = await requestRunControl(h.db, runId, { kind: "continue" }, me);
        await waitFor("the continue", () => acked(v3));
        assert.equal(control.gate.isOpen, true);
      } finally {
        await control.stop();
      }
      const events = await listRunEvents(h.db, runId);
      assert.deepEqual(
        events.map((e) => [e.kind, e.who, e.pid, e.rate]),
        [
          ["pause", "ana@ops1", 4242, null],
          ["set_rate", "ana@ops1", 4242, 5],
          ["continue", "ana@ops1", 4242, null],
        ],
      );
    });
  });
}
