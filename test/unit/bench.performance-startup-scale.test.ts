import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  latestOfEach,
  renderStartupAndScale,
  replaceBlock,
  STARTUP_SCALE_MARKERS,
} from "../bench/performance-startup-scale.ts";
import { REPO_ROOT } from "../helpers/cli.ts";

const base = { status: "ok", quick: false, commit: "abc1234", load_avg_1m_at_scenario_start: 0.7 };

function startup(at: string, demoMb = 289) {
  return {
    ...base,
    scenario: "k-startup",
    at,
    run_started_at: at,
    version: { pairs: 10, wall_s_median: 0.083, ratio_median: 1.16 },
    help: { pairs: 10, wall_s_median: 0.18, ratio_median: 2.54 },
    status_no_run: { postgres: { runs: 5, wall_s_median: 0.171 } },
    demo: { wall_s: 6.49, peak_rss_mb: demoMb },
    first_commands_fresh_data_dir: { identities: 10000, plan: { wall_s: 1.21, peak_rss_mb: 219 } },
    targets: {
      version_within_2x: true,
      help_within_3x: true,
      status_postgres_within_0_25_s: true,
      demo_within_10_s: true,
      demo_within_300_mb: demoMb <= 300,
      first_plan_within_250_mb: true,
    },
  };
}

function planOf(identities: number, wall: number, rss: number) {
  const phases_s = { platform_listing: wall - 3, source_pass_beside_listing: 3, after_listing: 1 };
  return { identities, wall_s: wall, peak_rss_mb: rss, peak_rss_at_s: 20, phases_s, held: {} };
}

function scale(at: string, largeRss = 173) {
  const rssRatio = largeRss / 153;
  return {
    ...base,
    scenario: "l-scale-ten-million",
    at,
    run_started_at: at,
    small: {
      ...planOf(1_000_000, 27.7, 153),
      phases_s: { ...planOf(0, 27.7, 0).phases_s, exit: 1 },
    },
    large: {
      ...planOf(10_000_000, 274.2, largeRss),
      phases_s: { ...planOf(0, 274, 0).phases_s, exit: 8 },
    },
    wall_ratio: 9.899,
    peak_rss_ratio: Math.round(rssRatio * 1000) / 1000,
    targets: { wall_within_10_5x: true, rss_within_1_15x: rssRatio <= 1.15 },
  };
}

describe("docs/performance.md's start-up and scale figures", () => {
  it("come from the latest full-size run of each scenario that ended ok, never a quick or failed one", () => {
    const picked = latestOfEach([
      startup("2026-11-27T01:00:00.000Z"),
      startup("2026-11-27T02:00:00.000Z"),
      { ...startup("2026-11-27T03:00:00.000Z"), quick: true },
      { ...startup("2026-11-27T04:00:00.000Z"), status: "failed" },
      scale("2026-11-26T23:00:00.000Z"),
    ]);
    assert.equal(picked.k.at, "2026-11-27T02:00:00.000Z");
    assert.equal(picked.l.at, "2026-11-26T23:00:00.000Z");
  });

  it("name the scenario no run holds, with the command that makes one", () => {
    assert.throws(
      () => latestOfEach([startup("2026-11-27T01:00:00.000Z")]),
      /no full-size run of l-scale-ten-million .*npm run bench -- --only k,l/,
    );
  });

  it("say which targets each run met, a ratio of 1.154 printed as over 1.15 rather than rounded to it", () => {
    const met = renderStartupAndScale({ k: startup("t1"), l: scale("t2") });
    assert.match(met, /\*\*1\.16×\*\* \(0\.083 s\) \| ≤ 2× \| \*\*met\*\*/);
    assert.match(
      met,
      /wall \*\*9\.899×\*\* \(target ≤ 10\.5×, \*\*met\*\*\), peak RSS \*\*1\.131×\*\*/,
    );
    assert.ok(!met.includes("not met"));
    const missed = renderStartupAndScale({ k: startup("t1", 310), l: scale("t2", 180) });
    assert.match(
      missed,
      /\*\*6\.49 s \/ 310 MB\*\* \| ≤ 10 s \/ ≤ 300 MB \| \*\*met\*\* \/ not met/,
    );
    assert.match(missed, /peak RSS \*\*1\.176×\*\* \(target ≤ 1\.15×, not met\)/);
    const hair = renderStartupAndScale({ k: startup("t1"), l: scale("t2", 176.6) });
    assert.match(hair, /peak RSS \*\*1\.154×\*\* \(target ≤ 1\.15×, not met\)/);
  });

  it("replace only the text between their markers, which docs/performance.md holds", () => {
    const doc = readFileSync(join(REPO_ROOT, "docs", "performance.md"), "utf8");
    const { begin, end } = STARTUP_SCALE_MARKERS;
    assert.ok(doc.includes(begin) && doc.includes(end), "docs/performance.md has the markers");
    const text = `a\n${begin}\nold\n${end}\nb\n`;
    assert.equal(replaceBlock(text, "new", STARTUP_SCALE_MARKERS), `a\n${begin}\nnew\n${end}\nb\n`);
    assert.throws(() => replaceBlock("none", "new", STARTUP_SCALE_MARKERS), /lacks the markers/);
  });
});
