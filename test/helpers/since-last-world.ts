/**
 * A world for `--since-last` (issue 55): a sandbox holding `n` identities created a day ago (so
 * their updated_at is older than any run's start less the margin), a source table `identities`
 * holding them (one in `flagEvery` with user_disabled), a CLI runner, the sandbox's request
 * counts and the outside changes of every kind, applied alike to any number of such worlds.
 *
 * @example
 *   const w = await sinceLastWorld(backend, { n: 20_000, flagEvery: 100, policy: "all" });
 *   const before = w.requests(); await w.run("reconcile", "--since-last"); w.requests().listing - before.listing;
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import { prng, uuidFrom } from "../../src/contract/index.ts";
import { runCliIn } from "./cli-in-dir.ts";
import type { backends, TestTarget } from "./db.ts";
import type { RunOutcome } from "./read-world.ts";

export interface SinceLastWorld {
  readonly sandbox: Sandbox;
  readonly target: TestTarget;
  readonly ids: readonly string[];
  /** Ids of the flagged rows (user_disabled), and of the others. */
  readonly flagged: readonly string[];
  readonly clean: readonly string[];
  run(...args: string[]): Promise<RunOutcome>;
  /** Requests the sandbox saw so far: listing pages and reads by id. */
  requests(): { listing: number; byId: number };
  /** Runs a statement on the source database. */
  source(statement: string): Promise<void>;
  close(): Promise<void>;
}

export interface WorldShape {
  readonly n: number;
  readonly flagEvery: number;
  readonly policy: "all" | "identity-fields" | "none";
  readonly seed?: number;
}

const DAY_AGO = () => new Date(Date.now() - 86_400_000).toISOString();

/** Starts a world of `shape.n` identities. */
export async function sinceLastWorld(
  backend: (typeof backends)[number],
  shape: WorldShape,
): Promise<SinceLastWorld> {
  const rand = prng(shape.seed ?? 5055);
  const ids = Array.from({ length: shape.n }, () => uuidFrom(rand)).sort();
  const isFlagged = (i: number) => i % shape.flagEvery === 0;
  const sandbox = await startSandbox({
    port: 0,
    rateLimitRps: 0,
    tokenRateLimitRps: 0,
    updatedAtPolicy: shape.policy,
  });
  const created = DAY_AGO();
  sandbox.seedIdentities(
    ids.map((id, i) => ({
      id,
      user_disabled: isFlagged(i),
      admin_disabled: false,
      created_at: created,
    })),
    { migratedFraction: 0, driftFraction: 0 },
  );
  const target = await backend.target();
  const exec = async (statement: string, params: unknown[] = []) => {
    const h = await target.open({ migrate: false });
    try {
      await sql.raw(statement).execute(h.db);
      if (params.length > 0) {
        await sql`insert into identities (id, user_disabled, admin_disabled)
          select id, u, false from unnest(${ids}::text[], ${params}::boolean[]) as t(id, u)`.execute(
          h.db,
        );
      }
    } finally {
      await h.close();
    }
  };
  await exec(
    "create table identities (id text primary key, user_disabled boolean, admin_disabled boolean)",
    ids.map((_, i) => isFlagged(i)),
  );
  const dir = mkdtempSync(join(tmpdir(), "cm-since-last-"));
  const env = {
    API_BASE_URL: sandbox.apiUrl,
    OAUTH_TOKEN_URL: sandbox.tokenUrl,
    OAUTH_CLIENT_ID: sandbox.credentials.clientId,
    OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
  };
  let runs = 0;
  const count = (prefix: string, exact: boolean) =>
    Object.entries(sandbox.stats().requests)
      .filter(([k]) => (exact ? k === prefix : k.startsWith(prefix)))
      .reduce((n, [, byStatus]) => n + Object.values(byStatus).reduce((a, b) => a + b, 0), 0);
  return {
    sandbox,
    target,
    ids,
    flagged: ids.filter((_, i) => isFlagged(i)),
    clean: ids.filter((_, i) => !isFlagged(i)),
    async run(...args: string[]) {
      runs += 1;
      const out = join(dir, `run-${runs}`);
      const writer = args[0] === "reconcile";
      const all = [...args, ...(writer ? ["--yes"] : []), "--no-progress", "--out", out];
      const r = await runCliIn(dir, [...all, ...target.args], env);
      const read = (p: string) => (existsSync(p) ? readFileSync(p, "utf8") : "");
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
    requests: () => ({
      listing: count("GET /v2/identity/identities", true),
      byId: count("GET /v2/identity/identities/", false),
    }),
    source: (statement) => exec(statement),
    async close() {
      await sandbox.close();
      await target.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Outside changes of every kind, the same on every world given: controls removed and added on the
 * platform, legacy fields set and cleared there, flags set and cleared in the source, rows
 * deleted. Returns the identities changed, by kind.
 */
export async function changeEverything(worlds: readonly SinceLastWorld[]) {
  const w0 = worlds[0] as SinceLastWorld;
  const f = w0.flagged;
  const c = w0.clean;
  const kinds = {
    controlRemoved: [f[1], f[2]],
    controlAdded: [c[1], c[2]],
    fieldSet: [f[6]],
    fieldCleared: [f[3]],
    flagSet: [c[4], c[5]],
    flagCleared: [f[4]],
    rowDeleted: [f[5]],
  } as Record<string, string[]>;
  for (const w of worlds) {
    for (const id of kinds.controlRemoved ?? []) {
      for (const ctl of w.sandbox.controlsOf(id)) w.sandbox.deleteControl(ctl.id);
    }
    for (const id of kinds.controlAdded ?? []) {
      w.sandbox.addControl(id, { type: "SELL_ONLY", set_by: "SET_BY_CLIENT" });
    }
    for (const id of kinds.fieldSet ?? []) w.sandbox.setLegacyFields(id, { admin_disabled: true });
    for (const id of kinds.fieldCleared ?? []) {
      w.sandbox.setLegacyFields(id, { user_disabled: false });
    }
    const list = (xs: string[] | undefined) => (xs ?? []).map((x) => `'${x}'`).join(", ");
    await w.source(
      `update identities set user_disabled = true where id in (${list(kinds.flagSet)})`,
    );
    await w.source(
      `update identities set user_disabled = false where id in (${list(kinds.flagCleared)})`,
    );
    await w.source(`delete from identities where id in (${list(kinds.rowDeleted)})`);
  }
  return kinds;
}
