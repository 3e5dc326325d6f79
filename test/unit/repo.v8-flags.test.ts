/**
 * The V8 flags the tool changes after start-up go through `src/v8-flags.ts`, whose table gives
 * each one's default: the installed command sets them back before it makes its code cache
 * (`src/bin.ts`), so the cache carries a fresh start's stamp. A flag set elsewhere, or a default
 * the running node no longer has, would make every later start reject the cache and write it again.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { V8_FLAG_DEFAULTS } from "../../src/v8-flags.ts";
import { ROOT, sourceFiles } from "../helpers/import-graph.ts";

describe("the V8 flags set after start-up", () => {
  it("are set by src/v8-flags.ts alone", () => {
    const setters = [
      ...sourceFiles(join(ROOT, "src")),
      ...sourceFiles(join(ROOT, "packages/sandbox/src")),
    ]
      .filter((file) => readFileSync(file, "utf8").includes("setFlagsFromString"))
      .map((file) => relative(ROOT, file).split("\\").join("/"));
    assert.deepEqual(setters, ["src/v8-flags.ts"]);
  });

  it("are restored to the defaults this node prints for them", () => {
    const options = spawnSync(process.execPath, ["--v8-options"], { encoding: "utf8" }).stdout;
    for (const [name, restored] of Object.entries(V8_FLAG_DEFAULTS)) {
      const entry = new RegExp(`^\\s+--${name} \\(.*\\)\\n\\s+type: \\w+\\s+default: (\\S+)$`, "m");
      const printed = entry.exec(options)?.[1];
      assert.equal(printed, restored, `--${name}: node prints the default ${printed}`);
    }
  });
});
