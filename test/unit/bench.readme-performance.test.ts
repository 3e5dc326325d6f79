import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  BEGIN,
  END,
  latestRun,
  parseResults,
  renderPerformance,
  replacePerformanceBlock,
} from "../bench/readme-performance.ts";
import { REPO_ROOT } from "../helpers/cli.ts";

const machine = { nproc: 2, cpu: "CPU", node: "v20", postgres: "15" };

function planRun(backend: string, identities: number, wall: number, rss: number) {
  return {
    backend,
    identities,
    wall_s: wall,
    identities_per_s: Math.round(identities / wall),
    peak_rss_mb: rss,
    listing_requests: identities / 1000,
    phases_s: { startup: 1, platform_listing: wall - 2, after_listing: 0.5, exit: 0.5 },
  };
}

function run(started: string, overrides: { pgliteWall?: number; efficiency?: number[] } = {}) {
  const base = { run_started_at: started, status: "ok", quick: false, commit: "abc1234", machine };
  const load = { load_avg_1m_at_scenario_start: 0.2 };
  return [
    {
      ...base,
      ...load,
      scenario: "a-plan",
      runs: [
        planRun("postgres", 100000, 5, 220),
        planRun("postgres", 1000000, 29, 240),
        planRun("pglite", 100000, 7, 360),
        planRun("pglite", 1000000, overrides.pgliteWall ?? 33, 390),
      ],
    },
    {
      ...base,
      ...load,
      scenario: "c-memory-scaling",
      sizes: [100000, 1000000],
      by_backend: { postgres: { ratio: 1.09 }, pglite: { ratio: 1.08 } },
    },
    {
      ...base,
      ...load,
      scenario: "i-rate-floor",
      plan_rate_40: {
        wall_s: 28,
        listing_pages: 1002,
        listing_floor_s: 25.1,
        wall_over_listing_floor: 1.12,
        last_page_to_exit_s: 1.4,
        peak_rss_mb: 240,
        rate_limited: 0,
      },
      plan_rate_1000: {
        wall_s: 19.5,
        peak_rss_mb: 250,
        phases_s: {
          startup: 1,
          platform_listing: 16,
          source_pass_beside_listing: 4,
          after_listing: 1,
          after_listing_findings: 0.2,
          after_listing_report: 0.1,
          exit: 1,
        },
      },
      apply_plan: {
        creates: 10000,
        controls_path_requests: 10000,
        controls_path_requests_per_create: 1,
        identities_path_requests: 2,
      },
    },
    {
      ...base,
      ...load,
      scenario: "j-apply-pglite-runs",
      setup: { creates: 10000, client: { rate: 190 }, sandbox: { windowS: 1 } },
      efficiency: overrides.efficiency ?? [0.999, 0.998, 0.999, 0.999, 0.998],
      rate_limited_429: [0, 0, 0, 0, 0],
      runs_meeting_target: "5 of 5",
      peak_rss_mb: [380, 390, 370, 360, 385],
    },
  ];
}

const jsonl = (lines: object[]) => lines.map((l) => JSON.stringify(l)).join("\n");

describe("docs/performance.md's figures", () => {
  it("come from the latest run that holds every issue-13 scenario, never a quick or partial one", () => {
    const older = run("2026-11-25T01:00:00.000Z", { pgliteWall: 40 });
    const partial = run("2026-11-25T03:00:00.000Z").filter(
      (l) => l.scenario !== "j-apply-pglite-runs",
    );
    const quick = run("2026-11-25T04:00:00.000Z").map((l) => ({ ...l, quick: true }));
    const chosen = run("2026-11-25T02:00:00.000Z");
    const picked = latestRun(parseResults(jsonl([...older, ...chosen, ...partial, ...quick])));
    assert.equal(picked.get("a-plan")?.run_started_at, "2026-11-25T02:00:00.000Z");
  });

  it("say which targets a run met and which it did not", () => {
    const met = renderPerformance(latestRun(parseResults(jsonl(run("2026-11-25T02:00:00.000Z")))));
    assert.match(
      met,
      /\*\*1\.12\*\* \(28 s; 1,002 pages, floor 25\.1 s\) \| ≤ 1\.15 \| \*\*met\*\*/,
    );
    assert.match(met, /\*\*33 s \/ 390 MB\*\* \| ≤ 35 s \/ ≤ 400 MB \| \*\*met\*\* \/ \*\*met\*\*/);
    assert.ok(!met.includes("not met"));
    const missed = renderPerformance(
      latestRun(
        parseResults(
          jsonl(
            run("2026-11-25T02:00:00.000Z", { pgliteWall: 36, efficiency: [0.999, 0.9, 1, 1, 1] }),
          ),
        ),
      ),
    );
    assert.match(missed, /\*\*36 s \/ 390 MB\*\* \| ≤ 35 s \/ ≤ 400 MB \| not met \/ \*\*met\*\*/);
    assert.match(missed, /\*\*0\.999, 0\.9, 1, 1, 1\*\* .* \| not met \|/);
  });

  it("name the missing scenarios when no run is complete", () => {
    const partial = run("2026-11-25T03:00:00.000Z").filter((l) => l.scenario !== "i-rate-floor");
    assert.throws(
      () => latestRun(parseResults(jsonl(partial))),
      /a-plan, c-memory-scaling, i-rate-floor/,
    );
  });

  it("replace only the text between the markers, which docs/performance.md holds", () => {
    const doc = readFileSync(join(REPO_ROOT, "docs", "performance.md"), "utf8");
    assert.ok(doc.includes(BEGIN) && doc.includes(END), "docs/performance.md has the markers");
    const text = `intro\n${BEGIN}\nold figures\n${END}\noutro\n`;
    assert.equal(replacePerformanceBlock(text, "new"), `intro\n${BEGIN}\nnew\n${END}\noutro\n`);
    assert.throws(() => replacePerformanceBlock("no markers", "new"), /lacks the markers/);
  });
});
