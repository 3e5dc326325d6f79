/**
 * The CLI's smaller words are true (issue 29 §6): a mistyped command is called unknown before a
 * suggestion, -v/-V print the version, piped --help honours COLUMNS, report --help names
 * report.html, pause with nothing running fails at once, and `npm run cli` works in the caller's
 * folder.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { unknownCommand } from "../../src/commands/usage-error.ts";
import { helpWidth } from "../../src/config.ts";
import { collect, REPO_ROOT, runCli } from "../helpers/cli.ts";

const version = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).version;

describe("the CLI's smaller words", () => {
  const dir = mkdtempSync(join(tmpdir(), "cm-words-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("a mistyped command says the command is unknown, then suggests the one meant", async () => {
    const r = await runCli(["aply"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^Error: Unknown command "aply"\. Did you mean apply\?/m);
    assert.equal(
      unknownCommand("Did you mean apply?", ["aply", "--yes"]),
      'Unknown command "aply". Did you mean apply?',
    );
    assert.equal(unknownCommand("Unknown argument: x", ["x"]), undefined);
  });

  it("-v and --version print the version, not the help; -V is not a spelling of it", async () => {
    for (const flag of ["-v", "--version"]) {
      const r = await runCli([flag]);
      assert.equal(r.code, 0, `${flag}: ${r.stderr}`);
      assert.equal(r.stdout, `${version}\n`, flag);
      assert.doesNotMatch(r.stderr, /Commands:/, flag);
    }
    const r = await runCli(["-V"]);
    assert.equal(r.code, 1, r.stderr);
    assert.ok(!r.stdout.includes(version) && !r.stderr.startsWith(version), "no version printed");
  });

  it("--help on a pipe is wrapped at COLUMNS, and report --help names report.html", async () => {
    const r = await runCli(["report", "--help"], { COLUMNS: "60" });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split("\n");
    assert.ok(lines.length > 5, r.stdout);
    const longest = Math.max(...lines.map((l) => l.length));
    assert.ok(longest <= 60, `the longest line has ${longest} characters`);
    assert.match(r.stdout.replace(/\s+/g, " "), /report\.html/);
    assert.equal(helpWidth(undefined, { COLUMNS: "60" }), 60);
    assert.equal(helpWidth(200, { COLUMNS: "60" }), 120);
    assert.equal(helpWidth(undefined, {}), 100);
  });

  it("pause with nothing running on an embedded database fails at once, without waiting for an answer", async () => {
    const r = await runCli(["pause", "--data-dir", join(dir, "pglite")]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /No apply, reconcile or revert is running on data folder/);
    assert.doesNotMatch(r.stderr, /nothing answered within/);
  });

  it("npm run cli runs the CLI in the folder npm was called from: its embedded database lands there, not in the repository", async () => {
    const caller = join(dir, "caller");
    mkdirSync(caller);
    // `npm --prefix` runs the repository's script from another folder; npm passes it as INIT_CWD.
    const npm = spawn(
      "npm",
      ["--prefix", REPO_ROOT, "run", "--silent", "cli", "--", "db", "migrate"],
      {
        cwd: caller,
        env: { ...process.env, CONTROLS_LOG_LEVEL: undefined, CONTROLS_DATA_DIR: undefined },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const r = await collect(npm);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(
      existsSync(join(caller, ".data", "pglite")),
      "the database is in the caller's folder",
    );
  });
});
