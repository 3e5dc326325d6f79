/**
 * `scripts/compile-suite.mjs`'s last step (`scripts/bundle-sandbox.mjs`): the sandbox package as
 * one ES module file, which the suite's condition gives as `controls-sandbox`, built from the
 * sources as they are now and exporting what the package's entry exports. Run from sources, the
 * test first brings the bundle up to date, as `npm test`'s compile step does.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { REPO_ROOT } from "../helpers/cli.ts";
import { moduleUrl, TSX_FOR_MODULES } from "../helpers/cli-entry.ts";

const CONDITION = "--conditions=controls-migrate-suite";
const SANDBOX = join(REPO_ROOT, "packages/sandbox");
const BUNDLE = join(SANDBOX, "suite-bundle/index.js");

function* typeScriptFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* typeScriptFiles(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

/** Runs a module script under the suite's condition (and tsx, from sources); its stdout as JSON. */
function underSuiteCondition(script: string): unknown {
  const args = [...new Set([CONDITION, ...TSX_FOR_MODULES])];
  const r = spawnSync(process.execPath, [...args, "--input-type=module", "-e", script], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

describe("the sandbox bundle of the compiled suite (scripts/bundle-sandbox.mjs)", () => {
  before(async () => {
    if (import.meta.url.endsWith(".ts")) {
      const script = pathToFileURL(join(REPO_ROOT, "scripts/bundle-sandbox.mjs")).href;
      await (await import(script)).bundleSandbox();
    }
  });

  it("is what controls-sandbox resolves to under the suite's condition, and the test helpers stay the compiled ones", () => {
    const resolved = underSuiteCondition(
      'console.log(JSON.stringify(["controls-sandbox", "controls-sandbox/test-helpers"].map((s) => import.meta.resolve(s))))',
    );
    assert.deepEqual(resolved, [
      pathToFileURL(BUNDLE).href,
      pathToFileURL(join(SANDBOX, "test/helpers/index.js")).href,
    ]);
  });

  it("is at least as new as every source of the sandbox and every file it was built from", () => {
    const built = statSync(BUNDLE).mtimeMs;
    const inputs = JSON.parse(readFileSync(join(SANDBOX, "suite-bundle/inputs.json"), "utf8"));
    assert.ok(inputs.includes("src/contract/published-schema.ts"), "the CLI's contract is bundled");
    const files = new Set<string>([
      ...typeScriptFiles(join(SANDBOX, "src")),
      ...inputs.map((f: string) => join(REPO_ROOT, f)),
    ]);
    const newer = [...files].filter((file) => statSync(file).mtimeMs > built);
    assert.deepEqual(newer, [], "run node scripts/compile-suite.mjs");
  });

  it("exports the same names, of the same kinds, as the package's entry, and names no folder of this machine", () => {
    const entry = moduleUrl(join(SANDBOX, "src/index.ts"));
    const [fromBundle, fromEntry] = underSuiteCondition(
      `const kinds = (m) => Object.entries(m).map(([k, v]) => k + ":" + typeof v).sort();
       const both = [await import("controls-sandbox"), await import(${JSON.stringify(entry)})];
       console.log(JSON.stringify(both.map(kinds)));`,
    ) as string[][];
    assert.ok(fromEntry!.includes("startSandbox:function"), fromEntry!.join(" "));
    assert.deepEqual(fromBundle, fromEntry);
    assert.equal(readFileSync(BUNDLE, "utf8").includes(REPO_ROOT), false);
  });
});
