/**
 * A small world for the tests of what a run read (issue 50): a sandbox holding every identity of
 * a source table `identities` (flags as given, no control), a proxy between the tool and the
 * sandbox for the API and the token endpoint alike, and a CLI runner that parses summary.json.
 *
 * @example
 *   const w = await readWorld(backend, rows);
 *   w.proxy.failWhen = (r) => (r.url.startsWith("/v2/identity/controls") ? "fail" : "forward");
 *   const r = await w.run("apply", "--state", "per-identity");
 *   // The same command's pipeline in this process, on a handle the test holds open:
 *   const h = await w.target.open();
 *   const r2 = await w.runIn(h, "reconcile", { state: "bulk", "exit-on": "changes" });
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import { runWiredPipeline } from "../../src/commands/pipeline-wiring.ts";
import { loadRunConfigs } from "../../src/config.ts";
import { prng, uuidFrom } from "../../src/contract/index.ts";
import type { DatabaseHandle } from "../../src/db/connection/connect.ts";
import type { RunMode } from "../../src/db/schema.ts";
import { silentLogger } from "../../src/log.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { REHEARSAL_ENV } from "./cli.ts";
import { runCliIn } from "./cli-in-dir.ts";
import type { backends, TestTarget } from "./db.ts";
import { startProxy, type TestProxy } from "./http-proxy.ts";

/** One source row: id, user_disabled, admin_disabled. */
export type Row = readonly [string, boolean, boolean];

export interface RunOutcome {
  readonly code: number;
  readonly stderr: string;
  /** summary.json as written (null when the run wrote none). */
  readonly summary: (RunSummary & Record<string, unknown>) | null;
  readonly md: string;
  readonly html: string;
  readonly out: string;
}

export interface ReadWorld {
  readonly sandbox: Sandbox;
  readonly proxy: TestProxy;
  readonly target: TestTarget;
  readonly dir: string;
  readonly env: Record<string, string>;
  run(...args: string[]): Promise<RunOutcome>;
  /**
   * One plan, apply or reconcile as its CLI command runs it (`runWiredPipeline`: the same
   * settings from the same flags and env, the same pipeline and platform client over HTTP through
   * the proxy, its reports in an out folder of its own), in this process on `handle`, a database
   * the test holds open. `flags` are the command's flags by name, as the CLI parses them;
   * `--yes` for a writer and `--out` are added as `run` adds them. No CLI child starts and, on
   * PGlite, the database is not opened again: each costs about 1 s of CPU. `stderr` is empty
   * (the run logs nothing here); read the summary.
   */
  runIn(
    handle: DatabaseHandle,
    mode: RunMode,
    flags?: Readonly<Record<string, string | boolean>>,
  ): Promise<RunOutcome>;
  close(): Promise<void>;
}

const NEVER = new AbortController().signal;

/** `n` ids drawn from `seed`. */
export function worldIds(n: number, seed: number): string[] {
  const rand = prng(seed);
  return Array.from({ length: n }, () => uuidFrom(rand));
}

/**
 * A database a CLI child can reach, without the tool's schema (its first run migrates it), whose
 * source relation `identities (id text, user_disabled boolean, admin_disabled boolean)` holds
 * `rows`. On PGlite a copy of a folder written once for these rows (no open of the database
 * here: about 1 s of CPU each time).
 *
 * @example
 *   const target = await sourceTarget(backend, [[id, true, false]]);
 */
export function sourceTarget(
  backend: (typeof backends)[number],
  rows: readonly Row[],
): Promise<TestTarget> {
  return backend.target({
    prepared: {
      key: createHash("sha256").update(JSON.stringify(rows)).digest("hex"),
      build: async (db) => {
        await sql`create table identities (id text, user_disabled boolean, admin_disabled boolean)`.execute(
          db,
        );
        for (const [id, u, a] of rows) {
          await sql`insert into identities values (${id}, ${u}, ${a})`.execute(db);
        }
      },
    },
  });
}

/** Starts a world whose platform holds every row given (legacy fields as the row's flags). */
export async function readWorld(
  backend: (typeof backends)[number],
  rows: readonly Row[],
): Promise<ReadWorld> {
  const sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
  sandbox.seedIdentities(
    rows.map(([id, u, a]) => ({ id, user_disabled: u, admin_disabled: a })),
    { migratedFraction: 0, driftFraction: 0 },
  );
  const target = await sourceTarget(backend, rows);
  const proxy = await startProxy(sandbox.apiUrl);
  const dir = mkdtempSync(join(tmpdir(), "cm-read-world-"));
  const env = {
    API_BASE_URL: proxy.url,
    OAUTH_TOKEN_URL: `${proxy.url}${new URL(sandbox.tokenUrl).pathname}`,
    OAUTH_CLIENT_ID: sandbox.credentials.clientId,
    OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
  };
  let runs = 0;
  const read = (p: string) => (existsSync(p) ? readFileSync(p, "utf8") : "");
  const outcome = (code: number, stderr: string, out: string): RunOutcome => {
    const json = read(join(out, "summary.json"));
    return {
      code,
      stderr,
      summary: json ? JSON.parse(json) : null,
      md: read(join(out, "summary.md")),
      html: read(join(out, "report.html")),
      out,
    };
  };
  return {
    sandbox,
    proxy,
    target,
    dir,
    env,
    async run(...args: string[]) {
      runs += 1;
      const out = join(dir, `run-${runs}`);
      const writer = args[0] === "apply" || args[0] === "reconcile";
      const all = [...args, ...(writer ? ["--yes"] : []), "--no-progress", "--out", out];
      const r = await runCliIn(dir, [...all, ...target.args], env);
      return outcome(r.code ?? -1, r.stderr, out);
    },
    async runIn(handle, mode, flags = {}) {
      runs += 1;
      const out = join(dir, `run-${runs}`);
      const argv = { ...flags, ...(mode === "plan" ? {} : { yes: true }), out };
      const configs = loadRunConfigs(argv, { ...REHEARSAL_ENV, ...env });
      const r = await runWiredPipeline(
        { configs, global: target.global, handle, logger: silentLogger, signal: NEVER },
        { mode, confirm: async () => true },
      );
      return outcome(r.exitCode, "", out);
    },
    async close() {
      await proxy.close();
      await sandbox.close();
      await target.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Asserts a summary was written and returns it. */
export function summaryOf(r: RunOutcome): RunSummary & Record<string, unknown> {
  assert.ok(r.summary, `no summary.json: exit ${r.code}\n${r.stderr.slice(-3000)}`);
  return r.summary;
}
