#!/usr/bin/env node
/**
 * `npm test`'s runner: `node <args>` (the node:test command) with a temporary folder of the run's
 * own as TMPDIR, and a check that the suite is hermetic.
 *
 * - The folder is made on a tmpfs when `/dev/shm` is one with room to spare (every PGlite test
 *   database is a copied folder of about a thousand files, every CLI child a reports folder;
 *   making and removing them on a journalled disk cost the suite's processes a second of system
 *   CPU in twenty), inside the caller's `TMPDIR` when one is set, else in the system's.
 * - Node's compile cache (`NODE_COMPILE_CACHE`) is kept in `node_modules/.cache/`: every test
 *   process and CLI child loads the TypeScript sources themselves (node strips their types), and
 *   the cache keeps each file's stripped and compiled code, keyed by its content, between
 *   processes and runs. It holds no copy a test could run instead of the source it names.
 * - When the run ends, every test must have removed what it wrote there, and the working tree must
 *   hold no file that `git status --ignored` did not show before the run, `node_modules/` and `dist/` aside (the dependencies and the build, with
 *   their caches: the suite's PGlite folders, the build's template). Whatever a test left behind
 *   is named, and the run exits 1 even when every test passed. So is a folder the run left in the
 *   working tree, empty ones too, which git does not show (a test that wrote a file into the
 *   working folder and removed it leaves its folder). Outside a git checkout only the temporary
 *   folder is checked. A file already modified before the run is not compared again.
 * - The folder is removed whatever the exit; the run's exit code (or signal) is this process's.
 *
 * Node 22.18 or later is required: it runs TypeScript by stripping its types, with no loader.
 *
 * @example
 *   node scripts/run-suite.mjs --test --test-concurrency=4 test/unit/*.test.ts
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const TMPFS_MAGIC = 0x01021994;
/** Room the suite's temporary files need at most, four files at a time, with margin. */
const ROOM_BYTES = 4 * 1024 ** 3;
/** The oldest node that runs the sources: type stripping without a flag. */
const OLDEST_NODE = [22, 18];

function roomyTmpfs() {
  try {
    const fs = statfsSync("/dev/shm");
    return fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= ROOM_BYTES;
  } catch {
    return false;
  }
}

function suiteFolder() {
  const base = process.env.TMPDIR || (roomyTmpfs() ? "/dev/shm" : tmpdir());
  const dir = mkdtempSync(join(base, "controls-migrate-suite-"));
  // As /tmp is: tests run as root hand PostgreSQL's initdb a folder of the postgres account.
  chmodSync(dir, 0o1777);
  return dir;
}

/** `git status` lines of the working tree, ignored files included; undefined outside a checkout. */
function treeStatus() {
  try {
    const out = execFileSync(
      "git",
      [
        "status",
        "--porcelain=v1",
        "-z",
        "--ignored=traditional",
        "--untracked-files=all",
        "--",
        ".",
        // The dependencies' and the build's folders, caches included: not the tests' to keep clean.
        ":(exclude,glob)**/node_modules/**",
        ":(exclude)dist",
      ],
      { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: 64 * 1024 ** 2 },
    );
    return new Set(out.split("\0").filter(Boolean));
  } catch {
    return undefined;
  }
}

/**
 * The working tree's folders, `.git`, `dist/` and every `node_modules/` aside, as are the folders
 * that hold a `node_modules/` (a workspace's package).
 */
function treeFolders() {
  const found = new Set();
  /** Adds the folders under `rel`; true when one of them holds dependencies. */
  const walk = (rel) => {
    let holdsDependencies = false;
    for (const entry of readdirSync(rel || ".", { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      if (entry.name === "node_modules") {
        holdsDependencies = true;
        continue;
      }
      if (rel === "" && (entry.name === ".git" || entry.name === "dist")) continue;
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (walk(path)) holdsDependencies = true;
      else found.add(path);
    }
    return holdsDependencies;
  };
  walk("");
  return found;
}

/** What the run left behind: in its temporary folder, and new in the working tree. */
function leftBehind(dir, treeBefore, foldersBefore) {
  const left = readdirSync(dir).map((name) => `TMPDIR: ${name}`);
  const after = treeBefore === undefined ? undefined : treeStatus();
  for (const line of after ?? []) {
    if (!treeBefore.has(line)) left.push(`working tree: ${line}`);
  }
  if (foldersBefore !== undefined) {
    const named = left.slice();
    const isNew = (folder) => folder !== "." && !foldersBefore.has(folder);
    for (const folder of treeFolders()) {
      // The outermost new folder only, and none that git's lines name already.
      if (!isNew(folder) || isNew(dirname(folder))) continue;
      if (named.some((l) => l.includes(` ${folder}/`))) continue;
      left.push(`working tree: ${folder}/ (a folder)`);
    }
  }
  return left;
}

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < OLDEST_NODE[0] || (major === OLDEST_NODE[0] && minor < OLDEST_NODE[1])) {
  process.stderr.write(
    `run-suite: node ${process.versions.node} cannot run the suite: it runs the TypeScript sources, which needs node ${OLDEST_NODE.join(".")} or later (npm install --prefix DIR node@24, then put DIR/node_modules/.bin first in PATH).\n`,
  );
  process.exit(1);
}
const COMPILE_CACHE = fileURLToPath(
  new URL("../node_modules/.cache/node-compile-cache", import.meta.url),
);
const dir = suiteFolder();
const treeBefore = treeStatus();
const foldersBefore = treeBefore === undefined ? undefined : treeFolders();
if (treeBefore === undefined) {
  process.stderr.write("run-suite: not a git checkout; only the temporary folder is checked.\n");
}
const child = spawn(process.execPath, process.argv.slice(2), {
  stdio: "inherit",
  env: { NODE_COMPILE_CACHE: COMPILE_CACHE, ...process.env, TMPDIR: dir },
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => {
  const left = signal === null ? leftBehind(dir, treeBefore, foldersBefore) : [];
  rmSync(dir, { recursive: true, force: true });
  if (signal !== null) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  if (left.length > 0) {
    const shown = left.slice(0, 40).map((l) => `  ${l}\n`);
    const more = left.length > 40 ? `  … and ${left.length - 40} more\n` : "";
    process.stderr.write(
      `run-suite: the tests left ${left.length} file(s) behind; a test writes only under a temporary folder it removes:\n${shown.join("")}${more}`,
    );
  }
  process.exit(code !== 0 ? (code ?? 1) : left.length > 0 ? 1 : 0);
});
