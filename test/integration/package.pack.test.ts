import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { before, describe, it } from "node:test";
import { REPO_ROOT } from "../helpers/cli.ts";

const npm = (args: string[]) =>
  execFileSync("npm", args, {
    cwd: REPO_ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });

/** Files of a folder of the repository, as paths relative to it. */
function filesUnder(dir: string): string[] {
  const root = join(REPO_ROOT, dir);
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(REPO_ROOT, join(d.parentPath, d.name)));
}

// `npm test` builds dist/ before any test runs; building it again here rewrote the bundle under
// other test files' CLI children. (The tarball packed from a fresh checkout, built by its own
// prepack, is package.install's.)
const built = existsSync(join(REPO_ROOT, "dist/cli.cjs"));

describe("the npm package", { skip: !built && "no dist/: run npm run build" }, () => {
  let files: string[];
  before(() => {
    // --ignore-scripts: prepack would empty dist/, which other test files may be running.
    const [pack] = JSON.parse(npm(["pack", "--dry-run", "--json", "--ignore-scripts"])) as {
      files: { path: string }[];
    }[];
    files = pack!.files.map((f) => f.path);
  });

  it("ships the built CLI, the compiled migrations, the PGlite template, README, CHANGELOG and LICENSE", () => {
    for (const f of [
      "package.json",
      "README.md",
      "CHANGELOG.md",
      "LICENSE",
      "dist/src/bin.js",
      "dist/src/cli.js",
      "dist/cli.cjs",
      "dist/migrations/index.js",
      "dist/migrations/0001-initial.js",
      "dist/migrations/0002-run-lifecycle.js",
      "dist/pglite/template.tar.gz",
      "dist/pglite/template.json",
    ]) {
      assert.ok(files.includes(f), `${f} is in the tarball`);
    }
    // The bundle's code cache, named by the bundle's build (scripts/build-bundle.ts).
    assert.equal(files.filter((f) => /^dist\/cli\.cjs\.[0-9a-f]{16}\.cache$/.test(f)).length, 1);
  });

  it("ships every file of schema/, which the sandbox reads at run time", () => {
    for (const f of filesUnder("schema")) assert.ok(files.includes(f), `${f} is in the tarball`);
  });

  it("leaves out sources, tests, CI scripts and source maps", () => {
    const stray = files.filter(
      (f) => /^(src|test|\.ci|scripts|migrations)\//.test(f) || f.endsWith(".map"),
    );
    assert.deepEqual(stray, []);
  });
});
