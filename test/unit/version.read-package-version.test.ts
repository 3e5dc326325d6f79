import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { readPackageVersion, TOOL_VERSION } from "../../src/version.ts";
import { REPO_ROOT } from "../helpers/cli.ts";
import { tempDir } from "../helpers/temp-dir.ts";

describe("readPackageVersion", () => {
  it("gives the version written in package.json, the only place it is written", () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"));
    assert.equal(TOOL_VERSION, pkg.version);
  });

  it("finds the package's own package.json from a built file nested deeper, skipping others", () => {
    const root = tempDir("cm-version-");
    writeFileSync(
      join(root, "package.json"),
      JSON.stringify({ name: "controls-migrate", version: "9.8.7" }),
    );
    mkdirSync(join(root, "dist", "src"), { recursive: true });
    writeFileSync(join(root, "dist", "package.json"), JSON.stringify({ name: "other" }));
    assert.equal(readPackageVersion(join(root, "dist", "src", "version.js")), "9.8.7");
  });
});
