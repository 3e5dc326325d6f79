import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { commandsReturning, exitCodesEpilogue } from "../../src/commands/exit-codes.ts";
import { withExitCodeColumn } from "../../src/commands/exit-codes-readme.ts";
import { REPO_ROOT } from "../helpers/cli.ts";

describe("README's exit-code table", () => {
  it("is current: its commands column is the one written from the commands' exit codes (npm run docs:exit-codes)", () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    assert.equal(withExitCodeColumn(readme), readme);
  });

  it("says which commands return each code, as their --help does", () => {
    assert.equal(commandsReturning(4), "plan, apply, reconcile");
    assert.equal(commandsReturning(130), "every command");
    assert.match(exitCodesEpilogue("apply"), /^Exit codes: 0 .*, 1 .*, 3 .*, 4 .*, 130 .*\.$/);
  });

  it("is refused when a code has no row, or a row names a code no command returns", () => {
    const table = (rows: string[]) =>
      ["| code | commands | meaning |", "|---|---|---|", ...rows, ""].join("\n");
    const all = [0, 1, 2, 3, 4, 130].map((c) => `| ${c} | x | m |`);
    assert.throws(() => withExitCodeColumn(table(all.slice(0, 5))), /no row for 130/);
    assert.throws(() => withExitCodeColumn(table([...all, "| 5 | x | m |"])), /names 5/);
    assert.throws(() => withExitCodeColumn("no table"), /no exit-code table/);
  });
});
