/**
 * SIGTERM and SIGINT are honoured during start-up too: while the embedded database is being opened
 * (synchronised on its debug line), and while the platform's token endpoint keeps the first request
 * waiting (synchronised on the request reaching it). The CLI exits 130, promptly, and leaves no
 * run `running` in the journal. Never synchronised on a sleep.
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { type CliResult, collect, runCli, spawnCli } from "../helpers/cli.ts";
import { seededTarget } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { type HostilePlatform, startHostilePlatform } from "../helpers/hostile-platform.ts";

const N = 40;
const SEED = 7;
const IDS = [...syntheticIdentities(N, SEED)].map((r) => r.id);
const SIGNALS = ["SIGTERM", "SIGINT"] as const;

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), "cm-startup-signals-"));
});
after(() => rmSync(root, { recursive: true, force: true }));

/** Sends `sig` to `child` once `ready` resolves; resolves with the result and ms since the signal. */
async function signalWhen(
  child: ChildProcess,
  ready: Promise<unknown>,
  sig: NodeJS.Signals,
): Promise<CliResult & { readonly afterSignalMs: number }> {
  const done = collect(child);
  const first = await Promise.race([ready.then(() => "ready" as const), done]);
  assert.equal(first, "ready", `the CLI ended before the event: ${JSON.stringify(first)}`);
  const sent = performance.now();
  child.kill(sig);
  const r = await done;
  return { ...r, afterSignalMs: performance.now() - sent };
}

/** Resolves when the child's stderr has printed a line matching `pattern`. */
function stderrLine(child: ChildProcess, pattern: RegExp): Promise<void> {
  let seen = "";
  return new Promise((resolve) => {
    child.stderr?.on("data", (d) => {
      seen += d;
      if (pattern.test(seen)) resolve();
    });
  });
}

/** The runs `runs --json` lists on `args`' database. */
async function listedRuns(args: readonly string[]): Promise<{ id: string; status: string }[]> {
  const r = await runCli(["runs", "--json", ...args]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; status: string });
}

describe("signals while the embedded database is being opened", { timeout: 120_000 }, () => {
  for (const sig of SIGNALS) {
    it(`${sig} while PGlite opens a new data folder exits 130 promptly and starts no run`, async (t) => {
      const dataDir = join(root, `open-${sig}`);
      const args = ["--data-dir", dataDir];
      const child = spawnCli(
        [
          "plan",
          "--no-progress",
          "--log-level",
          "debug",
          "--out",
          join(root, `out-${sig}`),
          ...args,
        ],
        {
          API_BASE_URL: "http://127.0.0.1:9",
          OAUTH_TOKEN_URL: "http://127.0.0.1:9/oauth2/token",
          OAUTH_CLIENT_ID: "cm",
          OAUTH_CLIENT_SECRET: "startup-secret-Zq81",
        },
      );
      const opening = stderrLine(child, /DEBUG PGlite data folder \S+: seeded/);
      const r = await signalWhen(child, opening, sig);
      assert.equal(r.code, 130, r.stderr);
      t.diagnostic(`exit ${r.code} ${Math.round(r.afterSignalMs)} ms after ${sig}`);
      assert.doesNotMatch(r.stderr, /\) started/, "no run is started after the signal");
      assert.match(r.stderr, new RegExp(`${sig} received`));
      assert.deepEqual(await listedRuns(args), []);
    });
  }
});

for (const backend of backends) {
  describe(`signals while the token endpoint keeps the CLI waiting on ${backend.name}`, {
    timeout: 180_000,
  }, () => {
    let target: TestTarget;
    let platform: HostilePlatform;
    let tokenAsked: () => void = () => undefined;
    const hanging: (() => void)[] = [];
    before(async () => {
      target = await seededTarget(backend, { identities: N, seed: SEED });
      platform = await startHostilePlatform({
        identities: IDS,
        // Never answers: the request stays open until the client gives up or the test ends.
        token: () =>
          new Promise<void>((resolve) => {
            hanging.push(resolve);
            tokenAsked();
          }),
      });
    });
    after(async () => {
      for (const release of hanging) release();
      await platform.close();
      await target.drop();
    });

    for (const sig of SIGNALS) {
      it(`${sig} while the first token request is unanswered exits 130 promptly and leaves no run running`, async (t) => {
        const asked = new Promise<void>((resolve) => {
          tokenAsked = resolve;
        });
        const child = spawnCli(
          [
            "apply",
            "--yes",
            "--no-progress",
            "--out",
            join(root, `token-${backend.name}-${sig}`),
            ...target.args,
          ],
          platform.env,
        );
        const r = await signalWhen(child, asked, sig);
        assert.equal(r.code, 130, r.stderr);
        t.diagnostic(`exit ${r.code} ${Math.round(r.afterSignalMs)} ms after ${sig}`);
        assert.equal(platform.calls["POST /v2/identity/controls"] ?? 0, 0);
        const runs = await listedRuns(target.args);
        t.diagnostic(`runs: ${runs.map((x) => x.status).join(", ") || "none"}`);
        assert.deepEqual(
          runs.filter((x) => x.status === "running"),
          [],
        );
        assert.doesNotMatch(r.stderr, /hostile-secret-Qx7vR2mZ/);
      });
    }
  });
}
