import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { README_BEGIN, README_END, renderReadmeOptions } from "../../src/config/readme-table.ts";
import { REPO_ROOT } from "../helpers/cli.ts";

describe("docs/options.md's tables", () => {
  it("are exactly the ones generated from the options table (run npm run docs:options)", () => {
    const readme = readFileSync(join(REPO_ROOT, "docs", "options.md"), "utf8");
    const start = readme.indexOf(README_BEGIN);
    const end = readme.indexOf(README_END);
    assert.ok(start >= 0 && end > start, "docs/options.md has the generated-section markers");
    assert.equal(readme.slice(start, end + README_END.length), renderReadmeOptions());
  });

  it("list every flag and env var of the table once per section", () => {
    const md = renderReadmeOptions();
    for (const name of ["--batch-size", "CONTROLS_BATCH_SIZE", "--api-url", "API_BASE_URL"]) {
      assert.ok(md.includes(name), name);
    }
    assert.ok(!md.includes("CONTROLS_YES"), "no env var confirms writes");
  });
});
