/**
 * A small world for the tests of what a run read (issue 50): a sandbox holding every identity of
 * a source table `identities` (flags as given, no control), a proxy between the tool and the
 * sandbox for the API and the token endpoint alike, and a CLI runner that parses summary.json.
 *
 * @example
 *   const w = await readWorld(backend, rows);
 *   w.proxy.failWhen = (r) => (r.url.startsWith("/v2/identity/controls") ? "fail" : "forward");
 *   const r = await w.run("apply", "--state", "per-identity");
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import { prng, uuidFrom } from "../../src/contract/index.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
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
  close(): Promise<void>;
}

/** `n` ids drawn from `seed`. */
export function worldIds(n: number, seed: number): string[] {
  const rand = prng(seed);
  return Array.from({ length: n }, () => uuidFrom(rand));
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
  const target = await backend.target();
  const h = await target.open({ migrate: false });
  try {
    await sql`create table identities (id text, user_disabled boolean, admin_disabled boolean)`.execute(
      h.db,
    );
    for (const [id, u, a] of rows) {
      await sql`insert into identities values (${id}, ${u}, ${a})`.execute(h.db);
    }
  } finally {
    await h.close();
  }
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
      const json = read(join(out, "summary.json"));
      return {
        code: r.code ?? -1,
        stderr: r.stderr,
        summary: json ? JSON.parse(json) : null,
        md: read(join(out, "summary.md")),
        html: read(join(out, "report.html")),
        out,
      };
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
