/**
 * report.html tells a run's story (issue 29 §2), read in headless Chromium at 1,280 and 1,920 px
 * and compared with summary.json: an apply that was paused, continued and given a new rate shows
 * its findings found → left, its outcomes coloured by meaning, its steering events as labelled
 * marks on the requests chart, x-axis labels that never repeat, and a diff table whose every
 * column fits the window. A reconcile after it is drawn too. Screenshots go to
 * $CONTROLS_TEST_SCREENSHOTS when set (a git-ignored or outside folder), else a temp folder.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import type { RunSummary } from "../../src/reports/summary.ts";
import {
  BROWSER_SKIP,
  openBrowser,
  type TestBrowser,
  type WatchedPage,
} from "../helpers/browser.ts";
import { type CliResult, collect, runCli, spawnCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends } from "../helpers/db.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 2_000;
const SEED = 33;
const CONTROLS = "/v2/identity/controls";

const attrs = (w: WatchedPage, selector: string, names: string[]) =>
  w.page
    .locator(selector)
    .evaluateAll((els, ns) => els.map((e) => ns.map((n) => e.getAttribute(n) ?? "")), names);

for (const backend of backends) {
  describe(`report.html's story on ${backend.name}`, {
    timeout: 600_000,
    skip: BROWSER_SKIP,
  }, () => {
    let rig: CliRig;
    let dir: string;
    let shots: string;
    let browser: TestBrowser;
    let apply: RunSummary;
    let reconcile: RunSummary;
    const cli = (args: string[]) => runCli([...args, ...rig.target.args], env());
    const env = () => ({ ...rig.env, CONTROLS_PROGRESS: "false" });

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED, sandbox: { latencyMs: 5 } });
      dir = mkdtempSync(join(tmpdir(), "cm-story-"));
      shots = process.env.CONTROLS_TEST_SCREENSHOTS || join(dir, "shots");
      mkdirSync(shots, { recursive: true });
      const from = Date.now();
      const out = join(dir, "apply");
      const run = collect(
        spawnCli(["apply", "--yes", "--rate", "2", "--out", out, ...rig.target.args], env()),
      );
      let ended: CliResult | undefined;
      void run.then((r) => {
        ended = r;
      });
      const writes = () => rig.sandbox.requestsIn({ from, endpoint: CONTROLS }).served;
      await waitFor("the first creates", () => writes() > 0 || ended !== undefined);
      for (const step of [["pause"], ["continue"], ["set-rate", "25"]]) {
        const r = await cli(step);
        assert.equal(r.code, 0, `${step.join(" ")}: ${r.stderr}`);
      }
      const done = await run;
      assert.equal(done.code, 0, done.stderr);
      apply = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
      const rec = await cli(["reconcile", "--yes", "--json", "--out", join(dir, "reconcile")]);
      assert.ok(rec.code === 0 || rec.code === 2, rec.stderr);
      reconcile = JSON.parse(rec.stdout);
      browser = await openBrowser();
    });
    after(async () => {
      await browser?.close();
      await rig.close();
      rmSync(dir, { recursive: true, force: true });
    });

    for (const width of [1280, 1920]) {
      it(`at ${width} px the apply's report shows findings found → left, outcomes coloured by meaning, labelled steering marks, unique axis labels and every diff column in the window, as summary.json says`, async () => {
        const w = await browser.open(pathToFileURL(join(dir, "apply", "report.html")).href);
        await w.page.setViewportSize({ width, height: 1000 });
        const findings = await attrs(w, "#findings-chart .bar-row", [
          "data-label",
          "data-before",
          "data-after",
        ]);
        assert.ok(findings.length > 0);
        for (const [label, found, left] of findings) {
          assert.equal(Number(found), apply.findings[label ?? ""], `${label} found`);
          assert.equal(Number(left), apply.findings_left?.[label ?? ""], `${label} left`);
        }
        assert.equal(Number(findings.find((f) => f[0] === "missing_client_control")?.[2]), 0);
        const outcomes = await attrs(w, "#outcomes-chart .bar-row", ["data-label", "data-count"]);
        assert.deepEqual(
          Object.fromEntries(outcomes.map(([k, n]) => [k, Number(n)])),
          apply.outcomes,
        );
        const created = w.page.locator(
          '#outcomes-chart .bar-row[data-label="succeeded:created"] rect.bar',
        );
        assert.match((await created.getAttribute("class")) ?? "", /bar-ok/);
        const marks = (await attrs(w, "#timeline .steer", ["data-label"])).map((m) => m[0]);
        assert.deepEqual(marks, ["pause", "continue", "set-rate 25"]);
        const events = (apply.control_events ?? []).map((e) => e.event);
        assert.deepEqual(events, ["pause", "continue", "set_rate"]);
        const axis = await w.page.locator("#timeline text.axis").allTextContents();
        const xLabels = axis.filter((t) => t.startsWith("+"));
        assert.ok(xLabels.length >= 2, axis.join(" | "));
        assert.equal(new Set(xLabels).size, xLabels.length, `repeated: ${xLabels.join(", ")}`);
        const table = await w.page.locator("#diff").boundingBox();
        const lastHead = await w.page.locator("#diff th").last().boundingBox();
        assert.ok(table && lastHead);
        assert.ok(
          lastHead.x + lastHead.width <= width,
          `the last column ends at ${lastHead.x + lastHead.width}`,
        );
        const clipped = await w.page
          .locator("#diff th")
          .evaluateAll((ths) =>
            ths.filter((th) => th.scrollWidth > th.clientWidth).map((th) => th.textContent),
          );
        assert.deepEqual(clipped, [], "every column's name is whole in its header");
        const outcomeCell = w.page.locator("#diff tbody tr").first().locator("td").nth(8);
        assert.equal(await outcomeCell.getAttribute("title"), await outcomeCell.textContent());
        await w.page.screenshot({
          path: join(shots, `${backend.name}-apply-${width}.png`),
          fullPage: true,
        });
        assert.deepEqual(w.problems, []);
        await w.page.close();
      });
    }

    it("at 1280 px the reconcile's report shows its findings found → left and no red outcome bar when nothing failed", async () => {
      const w = await browser.open(pathToFileURL(join(dir, "reconcile", "report.html")).href);
      const findings = await attrs(w, "#findings-chart .bar-row", ["data-label", "data-before"]);
      assert.ok(findings.length > 0);
      for (const [label, found] of findings) {
        assert.equal(Number(found), reconcile.findings[label ?? ""], `${label}`);
      }
      const failed = Object.entries(reconcile.outcomes).filter(
        ([k]) => k.startsWith("failed:") && k !== "failed:identity_not_found",
      );
      assert.equal(failed.length, 0);
      assert.equal(await w.page.locator("#outcomes-chart rect.bar-bad").count(), 0);
      await w.page.screenshot({
        path: join(shots, `${backend.name}-reconcile-1280.png`),
        fullPage: true,
      });
      assert.deepEqual(w.problems, []);
      await w.page.close();
    });
  });
}
