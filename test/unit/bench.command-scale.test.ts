import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { latestCommandScale, renderCommandScale } from "../bench/command-scale-doc.ts";
import { COMMANDS, type ScaleSize, scaleRatios } from "../bench/scenario-command-scale.ts";

/** A size whose every command took `wall(command)` seconds and `rss` MB. */
function size(identities: number, wall: (c: string) => number, rss = 150): ScaleSize {
  const commands = Object.fromEntries(
    COMMANDS.map((c) => [c, { wall_s: wall(c), peak_rss_mb: rss }]),
  ) as ScaleSize["commands"];
  return { identities, creates: identities / 10, deletes: identities / 10, commands };
}

describe("the command scale table (scenario s)", () => {
  it("passes linear growth and names each command whose wall grows past 15 times per tenfold", () => {
    const linear = [size(10_000, () => 1), size(100_000, () => 9.5), size(1_000_000, () => 95)];
    const ok = scaleRatios("postgres", linear);
    assert.equal(ok.over.length, 0, ok.over.join("; "));
    assert.equal(ok.toFirst.plan?.["1000000"], 95);

    const quadratic = [
      size(10_000, () => 1),
      size(100_000, (c) => (c === "revert" ? 40 : 10)),
      size(1_000_000, (c) => (c === "report" ? 200 : 100)),
    ];
    const bad = scaleRatios("pglite", quadratic);
    assert.equal(bad.over.length, 2, bad.over.join("; "));
    assert.match(
      bad.over[0] ?? "",
      /^report on pglite: 20× the wall for 10× the identities \(10 s → 200 s\)$/,
    );
    assert.match(
      bad.over[1] ?? "",
      /^revert on pglite: 40× the wall for 10× the identities \(1 s → 40 s\)$/,
    );
  });

  it("names a command whose peak memory grows past 15 times per tenfold", () => {
    const runs = [size(10_000, () => 1, 100), size(100_000, () => 2, 1600)];
    const { over } = scaleRatios("postgres", runs);
    assert.equal(over.length, COMMANDS.length, over.join("; "));
    assert.match(over[0] ?? "", /^plan on postgres: peak RSS 100 MB → 1600 MB$/);
  });

  it("renders one row per command and a column per size, from the latest full-size run that ended ok", () => {
    const line = (at: string, extra: Record<string, unknown> = {}) => ({
      scenario: "s-command-scale",
      status: "ok",
      quick: false,
      at,
      run_started_at: at,
      commit: "abc1234",
      load_avg_1m_at_scenario_start: 1.2,
      sizes: [10_000, 100_000],
      max_ratio_per_tenfold: 15,
      writes: "--rate 2000",
      postgres: {
        runs: [size(10_000, () => 1), size(100_000, () => 8)],
        wall_ratio_to_smallest: Object.fromEntries(
          COMMANDS.map((c) => [c, { "10000": 1, "100000": 8 }]),
        ),
      },
      ...extra,
    });
    const picked = latestCommandScale([
      line("2026-11-29T01:00:00.000Z"),
      line("2026-11-29T02:00:00.000Z", { quick: true }),
      line("2026-11-29T03:00:00.000Z", { status: "failed" }),
    ]);
    assert.equal(picked.at, "2026-11-29T01:00:00.000Z");
    const md = renderCommandScale(picked).split("\n");
    const rows = md.filter((l) => l.startsWith("| `"));
    assert.equal(rows.length, COMMANDS.length);
    assert.equal(rows[0], "| `plan` | 1 s / 150 MB (1×) | 8 s / 150 MB (8×) |");
    assert.ok(md.includes("| command | 10,000 | 100,000 |"), md.join("\n"));
    assert.throws(() => latestCommandScale([]), /npm run bench -- --only s/);
  });
});
