#!/usr/bin/env node
/**
 * `npm test` runs the suite as JavaScript: this compiles every TypeScript file the tests load
 * (`tsconfig.suite.json`: src, migrations, scripts, test and the sandbox package, types not
 * checked, since `npm run typecheck` does that) into a `.js` file beside it, ignored by git. Node
 * then loads the tests without tsx's module hooks, which cost each test process about a second of
 * CPU, most of it in the hooks' round trips for several hundred modules. Relative paths
 * (`import.meta.url`) stay those of the sources.
 *
 * A `.js` file whose `.ts` is gone (renamed or deleted) is removed, so no stale test runs.
 * `node --import tsx --test FILE.ts` still runs any test from its sources.
 *
 * Then, when a sandbox source is newer than it, the sandbox package is bundled into one ES module
 * file (`scripts/bundle-sandbox.mjs`, `packages/sandbox/suite-bundle/index.js`), which the same
 * condition gives the CLI's tests and their children as `controls-sandbox`: loading it costs a
 * process a third of the CPU that the package's several hundred modules do. The package's own
 * tests import its sources by relative paths, so they test those.
 *
 * Last, every test file of both packages is bundled with what it imports into one ES module
 * (`scripts/bundle-tests.mjs`, `.suite-bundle/` in each test folder), which `npm test` runs.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleSandbox } from "./bundle-sandbox.mjs";
import { bundleTests } from "./bundle-tests.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
/** The folders tsconfig.suite.json compiles in place (and .gitignore's `*.js` rules name). */
const FOLDERS = [
  "src",
  "migrations",
  "scripts",
  "test",
  "packages/sandbox/src",
  "packages/sandbox/test",
];

const BUILD_INFO = join(ROOT, "node_modules/.cache/controls-migrate-tests/suite.tsbuildinfo");
let missing = 0;

/** Removes `.js` files without their `.ts`; counts `.ts` files without their `.js`. */
function tidy(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") tidy(path);
    } else if (entry.name.endsWith(".js") && !existsSync(path.replace(/\.js$/, ".ts"))) {
      rmSync(path);
    } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
      if (!existsSync(path.replace(/\.ts$/, ".js"))) missing += 1;
    }
  }
}

for (const folder of FOLDERS) tidy(join(ROOT, folder));
// tsc's incremental state would skip a file whose output was deleted behind its back.
if (missing > 0) rmSync(BUILD_INFO, { force: true });
const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.suite.json")], {
  cwd: ROOT,
  stdio: "inherit",
});
await bundleSandbox();
await bundleTests();
