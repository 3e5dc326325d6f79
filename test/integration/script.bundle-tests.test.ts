/**
 * `scripts/compile-suite.mjs`'s last step (`scripts/bundle-tests.mjs`): each test file of both
 * packages as one ES module, which `npm test` runs. A bundled module must still find what sits
 * beside its source (fixtures, workers, helper scripts), and a bundle must exist for every test.
 * Run from sources, the test first makes the bundles, as `npm test`'s compile step does.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { REPO_ROOT } from "../helpers/cli.ts";
import { tempDir } from "../helpers/temp-dir.ts";

interface BundleTests {
  BUNDLE_FOLDER: string;
  testEntries(testRoot: string): string[];
  bundleTestFolder(testRoot: string, root?: string): Promise<number>;
  bundleTests(): Promise<number>;
}

const SCRIPT = pathToFileURL(join(REPO_ROOT, "scripts/bundle-tests.mjs")).href;
const kit = (await import(SCRIPT)) as BundleTests;

/** A test folder in `root`: `unit/a.test.js`, importing `lib/where.js`, beside `lib/data.txt`. */
function fixtureTests(root: string, where: string): string {
  const tests = join(root, "test");
  mkdirSync(join(tests, "unit"), { recursive: true });
  mkdirSync(join(tests, "lib"));
  writeFileSync(join(tests, "lib/data.txt"), "beside the source\n");
  writeFileSync(join(tests, "lib/where.js"), where);
  writeFileSync(
    join(tests, "unit/a.test.js"),
    'import { report } from "../lib/where.js";\nconsole.log(JSON.stringify(report()));\n',
  );
  return tests;
}

describe("the compiled suite's test bundles (scripts/bundle-tests.mjs)", () => {
  before(async () => {
    if (import.meta.url.endsWith(".ts")) await kit.bundleTests();
  });

  it("gives a bundled module its own file's import.meta.url, so it reads what sits beside its source, and writes no path of the machine", async () => {
    const root = tempDir("cm-bundle-tests-");
    const tests = fixtureTests(
      root,
      `import { readFileSync } from "node:fs";
       export function report() {
         return { url: import.meta.url, data: readFileSync(new URL("./data.txt", import.meta.url), "utf8") };
       }`,
    );
    assert.equal(await kit.bundleTestFolder(tests, root), 1);
    const bundle = join(tests, kit.BUNDLE_FOLDER, "unit/a.test.js");
    const r = spawnSync(process.execPath, [bundle], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      url: pathToFileURL(join(tests, "lib/where.js")).href,
      data: "beside the source\n",
    });
    assert.equal(readFileSync(bundle, "utf8").includes(root), false, "the bundle names its folder");
  });

  it("refuses a module that asks import.meta for its folder (dirname), naming the file, since it would get the bundle's folder", async () => {
    // Built from pieces: the check reads text, and this file is bundled too.
    const tests = fixtureTests(
      tempDir("cm-bundle-tests-"),
      `export function report() { return ${"import.meta"}.dirname; }\n`,
    );
    await assert.rejects(kit.bundleTestFolder(tests), /lib\/where\.js: import\.meta\.dirname/);
  });

  it("has a bundle for every compiled test file of both packages and none for a test that is gone", () => {
    for (const folder of ["test", "packages/sandbox/test"]) {
      const tests = join(REPO_ROOT, folder);
      const bundles = join(tests, kit.BUNDLE_FOLDER);
      const made = readdirSync(bundles, { withFileTypes: true })
        .filter((d) => d.isDirectory() && d.name !== "chunks")
        .flatMap((d) => readdirSync(join(bundles, d.name)).map((f) => join(d.name, f)))
        .filter((f) => f.endsWith(".test.js"))
        .sort();
      const expected = kit.testEntries(tests).map((f) => f.slice(tests.length + 1));
      assert.ok(expected.length > 10, `${folder}: ${expected.length} test files`);
      assert.deepEqual(made, expected, folder);
    }
  });
});
