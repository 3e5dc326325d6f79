/**
 * `status --watch` on a terminal (issue 14): while an apply runs, the status is redrawn in place
 * (the screen cleared before each drawing), and Ctrl-C stops the watching, never the run. How
 * often it redraws (every 2 s) is a matter of the clock, not checked here.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { collect, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { spawnInTty } from "../helpers/tty.ts";
import { waitFor } from "../helpers/wait-for.ts";

const CLEAR = "\x1b[H\x1b[2J";

describe("status --watch on a terminal", () => {
  let rig: CliRig;
  before(async () => {
    rig = await startCliRig(backends[0]!, {
      identities: 1_800,
      seed: 15,
      sandbox: { latencyMs: 5 },
    });
  });
  after(() => rig.close());

  it("redraws the running run at least three times, clearing the screen before each, and Ctrl-C stops the watching (exit 130) but not the run (exit 0), saying so and never the run's 'finishing in-flight work'", async () => {
    const env = { ...rig.env, CONTROLS_PROGRESS: "false" };
    const run = collect(spawnCli(["apply", "--yes", "--rate", "10", ...rig.target.args], env));
    await waitFor(
      "the apply to begin writing",
      () => rig.sandbox.requestsIn({ from: 0, endpoint: "/v2/identity/controls" }).served > 0,
      { intervalMs: 50 },
    );
    const watch = spawnInTty(["status", "--watch", ...rig.target.args], { env });
    await watch.waitFor(/apply, running[\s\S]*apply, running[\s\S]*apply, running/, 60_000);
    const shown = watch.output();
    assert.ok(shown.split(CLEAR).length - 1 >= 3, "each refresh clears the screen first");
    assert.match(shown, /Actions: \d+ \/ \d+ done/);
    assert.match(shown, /budget 10 requests\/s/);
    watch.type("\x03");
    const w = await watch.done;
    assert.equal(w.code, 130);
    // The watcher says what stopped: its watching, not the run's work.
    assert.match(watch.output(), /stopped watching; the run goes on/);
    assert.doesNotMatch(watch.output(), /finishing in-flight work/);
    // The watching is checked: the rest of the creates need not crawl at 10 a second.
    const faster = await collect(spawnCli(["set-rate", "40", ...rig.target.args], env));
    assert.equal(faster.code, 0, faster.stderr);
    const r = await run;
    assert.equal(r.code, 0, r.stderr);
  });
});
