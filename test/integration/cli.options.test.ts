import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runCli } from "../helpers/cli.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const env = {
  API_BASE_URL: "http://127.0.0.1:9",
  OAUTH_TOKEN_URL: "http://127.0.0.1:9/oauth2/token",
  OAUTH_CLIENT_ID: "c",
  OAUTH_CLIENT_SECRET: "s",
};
const dataDir = () => ["--data-dir", join(tempDir("cm-opts-"), "db")];

describe("command-line options from the options table", () => {
  it("apply refuses --resume together with --plan through yargs, before any work", async () => {
    const r = await runCli(["apply", "--resume", "a", "--plan", "b", "--yes", ...dataDir()], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /resume and plan are mutually exclusive/);
    assert.doesNotMatch(r.stderr, /Run \S+ \(apply\) started/);
  });

  it("plan says --batch-size must be a whole number when given text", async () => {
    const r = await runCli(["plan", "--batch-size", "abc", ...dataDir()], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--batch-size must be a whole number, got "abc"/);
    assert.doesNotMatch(r.stderr, /NaN/);
  });

  it("a value-taking flag given without its value is a usage error, not a crash", async () => {
    const r = await runCli(["runs", "--limit"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Not enough arguments following: limit/);
    assert.doesNotMatch(r.stderr, /at .*yargs/);
  });

  it("--help shows each option's env var and default from the table", async () => {
    const r = await runCli(["plan", "--help"]);
    assert.equal(r.code, 0, r.stderr);
    // Compared without whitespace: wrapping is another test's business.
    const flat = r.stdout.replace(/\s+/g, "");
    assert.match(flat, /--batch-size.*\[envCONTROLS_BATCH_SIZE\]\[default:1000\]/);
    assert.doesNotMatch(r.stdout, /\[string\]/);
  });
});
