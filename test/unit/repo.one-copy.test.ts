/**
 * One copy of the code: tests, scripts and the sandbox run from their TypeScript sources (node
 * strips the types), so no JavaScript may sit beside them but the few files the repository keeps
 * as JavaScript. A compiled copy beside a source can pass while the source is broken; this fails
 * on any such file, tracked or not, whoever wrote it (run after `npm test`'s build, it also
 * checks that the build wrote none).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FOLDERS = ["src", "test", "scripts", "migrations", "packages"];

function* scripts(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* scripts(path);
    else if (/\.[cm]?js$/.test(entry.name)) yield relative(ROOT, path);
  }
}

describe("one copy of the code", () => {
  it("keeps no JavaScript under src, test, scripts, migrations or packages but the files git tracks", () => {
    const tracked = new Set(
      execFileSync("git", ["ls-files", "-z", "--", ...FOLDERS], { cwd: ROOT, encoding: "utf8" })
        .split("\0")
        .filter(Boolean),
    );
    const found = FOLDERS.flatMap((folder) => [...scripts(join(ROOT, folder))]);
    assert.ok(found.length > 0, "the repository keeps a few JavaScript files (bins, .mjs scripts)");
    const untracked = found.filter((path) => !tracked.has(path));
    assert.deepEqual(untracked, [], "JavaScript beside the sources that git does not track");
  });

  it("keeps as JavaScript only the bins and the scripts that run before any TypeScript", () => {
    const tracked = execFileSync("git", ["ls-files", "-z", "--", ...FOLDERS], {
      cwd: ROOT,
      encoding: "utf8",
    })
      .split("\0")
      .filter((path) => /\.[cm]?js$/.test(path));
    assert.ok(tracked.length > 0);
    const unexpected = tracked.filter(
      (path) =>
        !/^scripts\/[^/]+\.mjs$/.test(path) && path !== "packages/sandbox/bin/controls-sandbox.js",
    );
    assert.deepEqual(unexpected, []);
  });
});
