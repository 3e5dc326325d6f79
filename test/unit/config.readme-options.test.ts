import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  README_BEGIN,
  README_END,
  renderReadmeOptions,
  SECTIONS,
} from "../../src/config/readme-table.ts";
import { REPO_ROOT } from "../helpers/cli.ts";

describe("docs/options.md's tables", () => {
  it("are exactly the ones generated from the options table (run npm run docs:options)", () => {
    const readme = readFileSync(join(REPO_ROOT, "docs", "options.md"), "utf8");
    const start = readme.indexOf(README_BEGIN);
    const end = readme.indexOf(README_END);
    assert.ok(start >= 0 && end > start, "docs/options.md has the generated-section markers");
    assert.equal(readme.slice(start, end + README_END.length), renderReadmeOptions());
  });

  it("list in each section every flag and env var of that section's options exactly once, and no other", () => {
    const md = renderReadmeOptions();
    const parts = md.split(/^\*\*(.+)\*\*$/m).slice(1);
    const sections = new Map<string, string>();
    for (let i = 0; i < parts.length; i += 2) sections.set(parts[i]!, parts[i + 1]!);
    assert.deepEqual(
      [...sections.keys()],
      SECTIONS.map(([title]) => title),
    );
    for (const [title, table] of SECTIONS) {
      const rows = (sections.get(title) ?? "")
        .split("\n")
        .filter((l) => l.startsWith("| `--"))
        .map((l) => l.split(" | "));
      const defs = Object.values(table);
      assert.ok(defs.length > 0, `${title} has options`);
      const flag = (cell: string) => cell.replace(/^\| `--(\[no-\])?/, "").replace(/`$/, "");
      assert.deepEqual(
        rows.map((r) => flag(r[0]!)),
        defs.map((d) => d.flag),
        title,
      );
      assert.deepEqual(
        rows.map((r) => r[1]),
        defs.map((d) => (d.env ? `\`${d.env}\`` : (d.envLabel ?? "—"))),
        title,
      );
    }
    assert.ok(!md.includes("CONTROLS_YES"), "no env var confirms writes");
  });
});
