/**
 * report.html in a real browser (headless Chromium): the demo's reports, then a page full of
 * hostile ids. Screenshots go to the folder named by env CONTROLS_TEST_SCREENSHOTS when it is set
 * (`npm run docs:screenshots` points it at reports/screenshots/, the README's pictures), else to a
 * temporary folder this file owns and removes: a test run never modifies the checkout.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import type { RunSummary } from "../../src/reports/summary.ts";
import {
  BROWSER_SKIP,
  openBrowser,
  type TestBrowser,
  type WatchedPage,
  waitForMatching,
} from "../helpers/browser.ts";
import { runDemo } from "../helpers/demo.ts";
import { scratchCwd } from "../helpers/scratch-cwd.ts";

const KEEP_SHOTS = process.env.CONTROLS_TEST_SCREENSHOTS || undefined;
const SHOTS = KEEP_SHOTS ? resolve(KEEP_SHOTS) : mkdtempSync(join(tmpdir(), "cm-screenshots-"));

interface DemoRun {
  readonly html: string;
  readonly summary: RunSummary;
}

const readSummary = (dir: string) =>
  JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as RunSummary;

/** Visible text of every row of a bar chart, as label → count. */
async function chartCounts(w: WatchedPage, id: string): Promise<Record<string, number>> {
  const rows = await w.page.locator(`#${id} .bar-row`).evaluateAll((gs) =>
    // A before → after chart carries what was found as data-before, a bar chart data-count.
    gs.map((g) => [
      g.querySelector(".bar-label")?.textContent ?? "",
      g.getAttribute("data-count") ?? g.getAttribute("data-before") ?? "",
    ]),
  );
  return Object.fromEntries(
    rows.map(([label, count]) => [label, Number(count?.replace(/,/g, ""))]),
  );
}

/**
 * summary.json's findings as the chart labels them: a kind the run's reads could not see (auto may
 * have chosen a strategy that does not look for it) is "KIND (not looked for)".
 */
function labelledFindings(summary: RunSummary): Record<string, number> {
  const unseen = new Set(summary.coverage?.not_looked_for ?? []);
  return Object.fromEntries(
    Object.entries(summary.findings).map(([k, n]) => [
      unseen.has(k) ? `${k} (not looked for)` : k,
      n,
    ]),
  );
}

const column = (w: WatchedPage, index: number) =>
  w.page.locator(`#diff tbody tr td:nth-child(${index + 1})`).allTextContents();

const matching = async (w: WatchedPage) =>
  Number(await w.page.locator("#diff-status").getAttribute("data-matching"));

describe("report.html of the demo, in headless Chromium", { skip: BROWSER_SKIP }, () => {
  let browser: TestBrowser;
  let runs: { plan: DemoRun; apply: DemoRun; reconcile: DemoRun };
  let cleanup: string[] = [];

  before(async () => {
    const demo = await runDemo(scratchCwd(), ["--identities", "2000", "--no-progress", "--json"]);
    assert.equal(demo.code, 0, demo.stderr);
    const out = JSON.parse(demo.stdout) as { reports: string[]; report_html: string[] };
    const dataDir = /in (\S+\.data\/demo-\S+);/.exec(demo.stderr)?.[1];
    cleanup = [...out.reports, ...(dataDir ? [dataDir] : [])];
    for (const path of out.report_html) {
      assert.ok(demo.stderr.includes(`open: ${path}`), "the demo prints each report.html path");
    }
    const [plan, apply, reconcile] = out.reports.map((dir) => ({
      html: pathToFileURL(join(dir, "report.html")).href,
      summary: readSummary(dir),
    }));
    assert.ok(plan && apply && reconcile);
    runs = { plan, apply, reconcile };
    browser = await openBrowser();
    mkdirSync(SHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
    if (!KEEP_SHOTS) rmSync(SHOTS, { recursive: true, force: true });
  });

  for (const mode of ["plan", "apply", "reconcile"] as const) {
    it(`shows the ${mode} run's status, exit code, duration, findings, outcomes and requests exactly as summary.json has them, with no console error`, async () => {
      const { html, summary } = runs[mode];
      const w = await browser.open(html);
      assert.equal(await w.page.locator("#mode").textContent(), summary.mode);
      assert.equal(await w.page.locator("#run-status").textContent(), summary.status);
      assert.equal(Number(await w.page.locator("#exit-code").textContent()), summary.exit_code);
      assert.equal(
        Number(await w.page.locator("#duration").textContent()),
        Number(summary.duration_s.toFixed(1)),
      );
      assert.match(
        (await w.page.locator("#api-url").textContent()) ?? "",
        /^http:\/\/127\.0\.0\.1:\d+$/,
      );
      assert.deepEqual(await chartCounts(w, "findings-chart"), labelledFindings(summary));
      if (Object.keys(summary.outcomes).length > 0) {
        assert.deepEqual(await chartCounts(w, "outcomes-chart"), summary.outcomes);
      } else {
        assert.equal(await w.page.locator("#outcomes-chart").textContent(), "No actions.");
      }
      const sent = Object.entries(summary.requests)
        .filter(([endpoint]) => endpoint !== "POST /oauth2/token")
        .reduce((n, [, f]) => n + f.count, 0);
      const totals = w.page.locator(".timeline-totals");
      assert.equal(Number(await totals.getAttribute("data-requests")), sent);
      // The table's API total is the caption's figure; the token requests are a row apart.
      const total = w.page.locator("#requests tr.total");
      assert.equal(Number(await total.getAttribute("data-api-requests")), sent);
      assert.ok(sent > 0 && (await w.page.locator("#timeline rect.rps").count()) > 0);
      assert.equal(await matching(w), summary.reports.rows);
      assert.equal(Number(await w.page.locator("#diff-more").getAttribute("data-more")), 0);
      if (mode === "reconcile") {
        const changes = w.page.locator("#changes");
        assert.ok(summary.changes);
        if (summary.changes.since_run_id) {
          assert.equal(
            Number(await changes.getAttribute("data-new")),
            summary.changes.new_findings,
          );
          assert.equal(
            Number(await changes.getAttribute("data-resolved")),
            summary.changes.resolved_findings,
          );
        } else {
          assert.match((await changes.textContent()) ?? "", /No previous apply or reconcile/);
        }
      }
      await w.page.screenshot({ path: join(SHOTS, `report-html-${mode}.png`) });
      assert.deepEqual(w.problems, []);
      await w.page.close();
    });
  }

  it("sorts the diff by a column header, ascending then descending", async () => {
    const w = await browser.open(runs.plan.html);
    const header = w.page.locator("#diff thead th").nth(0);
    await header.locator("button").click();
    assert.equal(await header.getAttribute("aria-sort"), "ascending");
    const up = (await column(w, 0)).filter((v) => v !== "");
    assert.ok(up.length > 10);
    assert.deepEqual(up, [...up].sort());
    await header.locator("button").click();
    assert.equal(await header.getAttribute("aria-sort"), "descending");
    const down = (await column(w, 0)).filter((v) => v !== "");
    assert.deepEqual(down, [...down].sort().reverse());
    assert.deepEqual(w.problems, []);
    await w.page.close();
  });

  it("filters the diff by finding, by outcome and by free text, counting what matches", async () => {
    const { html, summary } = runs.apply;
    const w = await browser.open(html);
    await w.page.selectOption("#filter-finding", "missing_client_control");
    assert.equal(await matching(w), summary.findings.missing_client_control);
    assert.deepEqual(new Set(await column(w, 3)), new Set(["missing_client_control"]));
    await w.page.selectOption("#filter-finding", "");
    await w.page.selectOption("#filter-outcome", "created");
    assert.equal(await matching(w), summary.outcomes["succeeded:created"]);
    assert.deepEqual(new Set(await column(w, 8)), new Set(["created"]));
    await w.page.selectOption("#filter-outcome", "");
    const someId = (await column(w, 0)).find((v) => v.length > 30) ?? "";
    await w.page.fill("#filter-text", someId.slice(4, 20));
    await waitForMatching(w.page, "<", summary.reports.rows);
    const ids = await column(w, 0);
    assert.ok(ids.length >= 1 && ids.every((id) => id.includes(someId.slice(4, 20))));
    await w.page.fill("#filter-text", "");
    await w.page.selectOption("#filter-finding", "missing_client_control");
    await waitForMatching(w.page, "=", summary.findings.missing_client_control ?? -1);
    await w.page.setViewportSize({ width: 1600, height: 760 });
    await w.page.locator("#diff-section h2").evaluate((h) => h.scrollIntoView());
    await w.page.screenshot({ path: join(SHOTS, "report-html-diff.png") });
    assert.deepEqual(w.problems, []);
    await w.page.close();
  });
});
