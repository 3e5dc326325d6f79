/**
 * The progress bar on a terminal shows true figures (issue 29 §6), in a pseudo-terminal: a rate
 * never above the budget in force (right after a burst too), a set-rate followed at once, and a
 * count never past its total.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { spawnInTty } from "../helpers/tty.ts";

const DRIVER = fileURLToPath(new URL("../helpers/progress-bar-driver.ts", import.meta.url));

describe("the progress bar on a terminal", () => {
  it("after a burst shows the budget in force as its rate, shows a lowered budget at once, and never a count past its total", async () => {
    const t = spawnInTty([], { entry: [DRIVER] });
    // 500 done at once against a budget of 40 requests/s: the rate shown is the budget.
    await t.waitFor(/500\/500 \| 40\/s/);
    t.type("4\r"); // a set-rate 4: the next refresh shows it
    await t.waitFor(/501\/501 \| 4\/s/);
    t.type("q\r");
    const { code, output } = await t.done;
    assert.equal(code, 0, output);
    const rates = [...output.matchAll(/\| (\d+)\/s/g)].map((m) => Number(m[1]));
    assert.ok(rates.length >= 2, output);
    assert.ok(
      rates.every((r) => r <= 40),
      `every rate shown is at most the budget: ${rates}`,
    );
    const after = output.slice(output.indexOf("501/501"));
    for (const m of after.matchAll(/\| (\d+)\/s/g)) assert.ok(Number(m[1]) <= 4, after);
    for (const [, done, total] of output.matchAll(/(\d+)\/(\d+) \|/g)) {
      assert.ok(Number(done) <= Number(total), `${done}/${total}`);
    }
  });
});
