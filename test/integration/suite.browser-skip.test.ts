/**
 * The browser tests on a machine without Chromium (`test/helpers/browser.ts`, `BROWSER_SKIP`):
 * skipped with the reason and the command that installs it, so `npm test` on a fresh machine
 * passes and says what it did not run; on CI, where `.ci/run` installs Chromium, a missing browser
 * fails them instead of hiding them.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";

const BROWSER = new URL("../helpers/browser.ts", import.meta.url).href;

/** Runs one node:test test guarded by BROWSER_SKIP, in a child with the given env. */
function runGuardedTest(env: NodeJS.ProcessEnv) {
  const script = `import { it } from "node:test";
import { BROWSER_SKIP } from ${JSON.stringify(BROWSER)};
it("opens the report in Chromium", { skip: BROWSER_SKIP }, () => { throw new Error("the test ran"); });`;
  const clean = { ...process.env, ...env };
  delete clean.NODE_TEST_CONTEXT;
  for (const key of Object.keys(env)) if (env[key] === undefined) delete clean[key];
  return spawnSync(process.execPath, ["--test-reporter=tap", "--input-type=module", "-e", script], {
    env: clean,
    encoding: "utf8",
  });
}

describe("the browser tests where Chromium is missing", () => {
  it("are skipped with the reason and the install command, and the run passes", () => {
    const r = runGuardedTest({ CHROMIUM_PATH: "/nonexistent/chromium", CI: undefined });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /# SKIP Chromium is not installed at \/nonexistent\/chromium: install it with apt-get install -y --no-install-recommends chromium/,
    );
    assert.doesNotMatch(r.stdout, /the test ran/);
  });

  it("fail on CI, where .ci/run installs Chromium, instead of being skipped", () => {
    const r = runGuardedTest({ CHROMIUM_PATH: "/nonexistent/chromium", CI: "true" });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /the test ran/);
    assert.doesNotMatch(r.stdout, /# SKIP/);
  });
});
