/**
 * The suite is hermetic: a test writes only under a temporary folder it owns and removes. Checked
 * in a fresh copy of the working tree (every tracked or not-ignored file, committed into a new
 * repository, node_modules linked package by package, the build's `dist/` copied): a
 * representative subset of the suite runs there with its own TMPDIR, then the copy's `git status`
 * and that TMPDIR are inspected.
 *
 * The subset holds the tests that used to leave files behind: the CLI started with its default
 * `reports/` and `.data/` folders, report.html's screenshots, a PGlite run's folders, and a
 * terminal (TTY) run.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { REPO_ROOT } from "../helpers/cli.ts";
import { CLI_ENTRY } from "../helpers/cli-entry.ts";

const SUBSET = [
  "test/integration/cli.conventions.test.ts",
  "test/integration/cli.settings.test.ts",
  "test/e2e/plan.per-identity.test.ts",
  "test/e2e/reports.report-html.test.ts",
];
/** What `git status --ignored` may show after the suite: dependencies and the build's output. */
const ALLOWED_IGNORED = new Set(["node_modules/", "dist/", "tsconfig.tsbuildinfo"]);

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "core.quotePath=false", ...args], { cwd, encoding: "utf8" });

/** A new repository holding the working tree's files as they are now, with node_modules linked. */
function copyOfWorkingTree(into: string): void {
  const files = git(REPO_ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    .split("\0")
    .filter((f) => f !== "" && existsSync(join(REPO_ROOT, f)));
  for (const file of files) {
    mkdirSync(dirname(join(into, file)), { recursive: true });
    copyFileSync(join(REPO_ROOT, file), join(into, file));
  }
  // The build, when the suite itself runs from it (built from the sources as they are, as `npm
  // test` leaves it), copied after the sources so it is newer there too: the subset's CLI children
  // then start from the bundle and fresh PGlite folders from the template, as in the suite,
  // instead of from the sources under tsx and initdb. A stale build stays behind.
  if (CLI_ENTRY[0] === join(REPO_ROOT, "dist/src/bin.js")) {
    cpSync(join(REPO_ROOT, "dist"), join(into, "dist"), { recursive: true });
  }
  // A real folder of links, so git's `node_modules/` rule (folders only) matches it.
  mkdirSync(join(into, "node_modules"));
  for (const entry of readdirSync(join(REPO_ROOT, "node_modules"))) {
    symlinkSync(join(REPO_ROOT, "node_modules", entry), join(into, "node_modules", entry));
  }
  const quiet = ["-c", "user.name=test", "-c", "user.email=test@localhost"];
  git(into, "init", "-q");
  git(into, "add", "-A");
  git(into, ...quiet, "commit", "-q", "--no-verify", "-m", "working tree");
}

/** Runs node's test runner on `files` in `cwd`; resolves with its exit code and output. */
function runSuite(cwd: string, files: readonly string[], tmp: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
  // This file runs under `node --test`: its context variable would turn the child into a
  // reporter-less subtest runner.
  delete env.NODE_TEST_CONTEXT;
  delete env.CONTROLS_TEST_SCREENSHOTS;
  const child = spawn(process.execPath, ["--import", "tsx", "--test", ...files], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

describe("the test suite, run in a fresh copy of the repository", { timeout: 600_000 }, () => {
  let home: string;
  let clone: string;
  let tmp: string;
  let run: { code: number | null; output: string };

  before(async () => {
    home = mkdtempSync(join(tmpdir(), "cm-hermetic-"));
    clone = join(home, "repo");
    tmp = join(home, "tmp");
    mkdirSync(clone);
    mkdirSync(tmp);
    copyOfWorkingTree(clone);
    run = await runSuite(clone, SUBSET, tmp);
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  it("passes there, with tests in every file of the subset", () => {
    assert.equal(run.code, 0, run.output.slice(-4000));
    const passed = Number(/^# pass (\d+)$/m.exec(run.output)?.[1]);
    assert.ok(passed >= SUBSET.length, `only ${passed} tests passed:\n${run.output.slice(-2000)}`);
  });

  it("leaves git status --porcelain empty: no tracked file modified, no untracked file", () => {
    assert.equal(git(clone, "status", "--porcelain"), "");
  });

  it("leaves no ignored file beyond node_modules/, dist/ and the build's caches", () => {
    const ignored = git(clone, "status", "--porcelain", "--ignored")
      .split("\n")
      .filter((l) => l.startsWith("!! "))
      .map((l) => l.slice(3));
    assert.ok(ignored.includes("node_modules/"), "the check sees ignored files at all");
    assert.deepEqual(
      ignored.filter((path) => !ALLOWED_IGNORED.has(path)),
      [],
    );
  });

  it("removes everything its tests wrote under TMPDIR (tsx's own transform cache aside)", () => {
    // tsx keeps its compile cache in TMPDIR/tsx-<uid>: the build tool's cache, not a test's file.
    assert.deepEqual(
      readdirSync(tmp).filter((name) => !/^tsx-\d+$/.test(name)),
      [],
    );
  });
});
