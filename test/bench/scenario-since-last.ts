/**
 * Scenario n — a night of `--since-last` (issue 55): two complete reconciles of a sandbox (at a
 * rate the sandbox allows, not the client's: they only set the scene), then outside changes of
 * every kind (controls removed and added and legacy fields set and cleared on the platform, flags
 * set and cleared and rows deleted in the source), then, on the same world, `reconcile
 * --since-last` and a complete `reconcile --state bulk`, each with its own copy of the database
 * as the outside changes left it (so both compare themselves with the same second night): the
 * controls the first one created are deleted again before the second one reads. Reports the
 * listing and by-id requests each made (as the sandbox counted them), their wall time, and
 * compares their findings identity by identity (diff.csv), their new and resolved findings and
 * their outside changes (summary.json, and changes.csv identity by identity). Fails when they
 * differ, and at 1,000,000 identities or more when --since-last makes more than 1/20 of the
 * complete reconcile's requests (the acceptance). PostgreSQL only: the source's changes
 * and the copy are made through a PostgreSQL client. Default 100,000 identities and 1,000
 * changes (quick: 20,000 and 100); `--sizes N` runs the largest N given.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { parseCsv } from "../helpers/corpus.ts";
import {
  type BenchKit,
  type BenchSandbox,
  expectExit,
  round,
  routeCount,
  runTool,
  startBenchSandbox,
  type ToolRun,
  UNLIMITED_WRITES,
} from "./scenario-kit.ts";
import { type DbTarget, openTarget, seedTarget } from "./scenario-postgres.ts";

const SEED = 55;
const TIMEOUT_MS = 60 * 60_000;
const LISTING = "GET /v2/identity/identities";
const BY_ID = "GET /v2/identity/identities/:id";
/** The acceptance: at most 1/20 of a complete reconcile's requests, at 1,000,000. */
const MAX_RATIO = 1 / 20;
const FULL_SIZE = 1_000_000;

/** The changes' shares of the total, by kind. */
const SHARES = {
  control_removed: 0.2,
  control_added: 0.2,
  field_set: 0.15,
  field_cleared: 0.15,
  flag_set: 0.1,
  flag_cleared: 0.1,
  row_deleted: 0.1,
} as const;

/** Scenario n: its JSON figures. */
export async function sinceLastScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  const identities = kit.quick ? 20_000 : kit.sizesGiven ? Math.max(...kit.sizes) : 100_000;
  const changes = kit.quick ? 100 : 1000;
  if (!kit.postgres || !kit.backends.includes("postgres")) {
    return { skipped: "scenario n changes the source through PostgreSQL: no PostgreSQL backend" };
  }
  const sandbox = await startBenchSandbox(kit, [
    ...["--identities", String(identities), "--seed", String(SEED)],
    ...["--rate-limit", "0", "--token-rate-limit", "0"],
  ]);
  const target = await openTarget(kit.cleanup, kit.postgres, "postgres");
  const out = mkdtempSync(join(tmpdir(), "cm-bench-since-last-"));
  const removeOut = kit.cleanup.add(`remove ${out}`, () =>
    rmSync(out, { recursive: true, force: true }),
  );
  try {
    await seedTarget(kit, target, identities, SEED);
    for (const night of [1, 2]) {
      const run = await tool(kit, sandbox, target, out, `night-${night}`, [
        ...["reconcile", "--yes", "--state", "bulk", ...UNLIMITED_WRITES],
      ]);
      expectExit(run.run, [0, 2], `complete reconcile #${night}`);
    }
    const made = await changeWorld(kit, sandbox, target, identities, changes);
    const copy = await copyTarget(kit, target);
    const load = { start: loadAverage(), end: "" };
    const command = ["reconcile", "--exit-on", "any", "--yes"];
    const inc = await tool(kit, sandbox, target, out, "since-last", [
      ...[...command, "--since-last", "--since-margin-s", "0"],
    ]);
    const undone = await undoCreates(sandbox, target, inc.run.summary?.run_id ?? "");
    const full = await tool(kit, sandbox, copy, out, "complete", [...command, "--state", "bulk"]);
    load.end = loadAverage();
    const compared = compareRuns(out, inc.run, full.run);
    const ratio =
      (inc.figures.listing + inc.figures.by_id) / (full.figures.listing + full.figures.by_id);
    const figures = {
      backend: "postgres",
      identities,
      compared_as: command[0],
      outside_changes: made,
      since_last: inc.figures,
      complete: full.figures,
      request_ratio: round(ratio, 4),
      load_average: load,
      undone_creates: undone,
      compared,
      since_last_state: inc.run.summary?.platform_state?.since_last ?? null,
      coverage: inc.run.summary?.coverage ?? null,
    };
    kit.log(`  ${JSON.stringify(figures)}`);
    if (!compared.equal) {
      throw new Error(
        `--since-last and the complete ${command[0]} differ: ${JSON.stringify(compared)}`,
      );
    }
    if (identities >= FULL_SIZE && ratio > MAX_RATIO) {
      throw new Error(
        `--since-last made ${round(ratio, 4)} of the complete ${command[0]}'s requests, more than 1/20 (${JSON.stringify({ since_last: inc.figures, complete: full.figures })})`,
      );
    }
    return {
      setup: {
        what: "two complete reconciles, outside changes of every kind, then reconcile --since-last (margin 0) and reconcile --state bulk on the same world, each on its own copy of the database (the first one's creates deleted again before the second)",
        sandbox: "separate process (CLI), --updated-at-policy all, --rate-limit 0",
      },
      runs: [figures],
    };
  } finally {
    await removeOut();
    await target.drop();
    await sandbox.stop();
  }
}

/** Runs the tool with its report in `out/name`; its requests as the sandbox counted them. */
async function tool(
  kit: BenchKit,
  sandbox: BenchSandbox,
  target: DbTarget,
  out: string,
  name: string,
  args: readonly string[],
) {
  const before = await sandbox.stats();
  kit.log(`${args.join(" ")}...`);
  const run = await runTool(
    kit,
    [...args, "--json", "--no-progress", "--out", join(out, name), ...target.args],
    sandbox.env,
    TIMEOUT_MS,
  );
  expectExit(run, [0, 2], args.join(" "));
  const after = await sandbox.stats();
  const figures = {
    listing: routeCount(after, LISTING) - routeCount(before, LISTING),
    by_id: routeCount(after, BY_ID) - routeCount(before, BY_ID),
    wall_s: round(run.wallS, 1),
  };
  return { run, figures };
}

/** Makes `total` outside changes by {@link SHARES}; returns how many of each kind. */
async function changeWorld(
  kit: BenchKit,
  sandbox: BenchSandbox,
  target: DbTarget,
  identities: number,
  total: number,
): Promise<Record<string, number>> {
  const flagged: string[] = [];
  const clean: string[] = [];
  for (const row of syntheticIdentities(identities, SEED)) {
    if (row.user_disabled && !row.admin_disabled) flagged.push(row.id);
    else if (!row.user_disabled && !row.admin_disabled) clean.push(row.id);
  }
  const n = (k: keyof typeof SHARES) => Math.round(total * SHARES[k]);
  const take = (from: string[], k: keyof typeof SHARES) => from.splice(0, n(k));
  const admin = sandbox.info.admin_url;
  const send = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${admin}${path}`, {
      method,
      headers: body ? { "content-type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`sandbox admin ${method} ${path}: ${res.status}`);
    return res.status === 204 ? null : res.json();
  };
  for (const id of take(flagged, "control_removed")) {
    const list = (await send("GET", `/identities/${id}/controls`)) as { items: { id: string }[] };
    for (const c of list.items) await send("DELETE", `/controls/${c.id}`);
  }
  for (const id of take(clean, "control_added")) {
    await send("POST", `/identities/${id}/controls`, {
      type: "SELL_ONLY",
      set_by: "SET_BY_CLIENT",
    });
  }
  for (const id of take(flagged, "field_set")) {
    await send("PATCH", `/identities/${id}/legacy`, { admin_disabled: true });
  }
  for (const id of take(flagged, "field_cleared")) {
    await send("PATCH", `/identities/${id}/legacy`, { user_disabled: false });
  }
  await changeSource(target, {
    set: take(clean, "flag_set"),
    cleared: take(flagged, "flag_cleared"),
    deleted: take(flagged, "row_deleted"),
  });
  kit.log(`made ${total} outside changes`);
  return Object.fromEntries(Object.keys(SHARES).map((k) => [k, n(k as keyof typeof SHARES)]));
}

async function changeSource(
  target: DbTarget,
  ids: { set: string[]; cleared: string[]; deleted: string[] },
): Promise<void> {
  const url = target.args[target.args.indexOf("--database-url") + 1];
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("update identities set user_disabled = true where id = any($1)", [ids.set]);
    await client.query("update identities set user_disabled = false where id = any($1)", [
      ids.cleared,
    ]);
    await client.query("delete from identities where id = any($1)", [ids.deleted]);
  } finally {
    await client.end();
  }
}

/** A copy of `target` as it is now (no connection may be open to it), dropped by cleanup. */
async function copyTarget(kit: BenchKit, target: DbTarget): Promise<DbTarget> {
  const url = new URL(target.args[target.args.indexOf("--database-url") + 1] ?? "");
  const from = url.pathname.slice(1);
  const name = `${from}_copy`;
  const admin = new pg.Client({ connectionString: kit.postgres?.adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${from}`);
  } finally {
    await admin.end();
  }
  const drop = kit.cleanup.add(`drop database ${name}`, async () => {
    const c = new pg.Client({ connectionString: kit.postgres?.adminUrl });
    await c.connect();
    try {
      await c.query(`drop database if exists ${name} with (force)`);
    } finally {
      await c.end();
    }
  });
  url.pathname = `/${name}`;
  return { backend: "postgres", args: ["--database-url", url.toString()], drop };
}

/** Deletes on the sandbox every control run `runId` created: the world as it was before it. */
async function undoCreates(sandbox: BenchSandbox, target: DbTarget, runId: string) {
  const url = target.args[target.args.indexOf("--database-url") + 1];
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let ids: string[];
  try {
    const r = await client.query<{ id: string }>(
      `select result_control_id as id from controls_migration.actions
       where run_id = $1 and action = 'create' and result_control_id is not null
         and outcome = 'created'`,
      [runId],
    );
    ids = r.rows.map((x) => x.id);
  } finally {
    await client.end();
  }
  for (const id of ids) {
    const res = await fetch(`${sandbox.info.admin_url}/controls/${id}`, { method: "DELETE" });
    if (!res.ok) throw new Error(`sandbox admin DELETE /controls/${id}: ${res.status}`);
  }
  return ids.length;
}

const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/**
 * The two runs compared: their findings identity by identity (diff.csv, in_sync left out) and by
 * kind, their new and resolved findings, and their outside changes by kind and identity by
 * identity (changes.csv).
 */
function compareRuns(out: string, inc: ToolRun, full: ToolRun) {
  const rows = (dir: string, file: string, key: (r: Record<string, string>) => string | null) =>
    new Set(
      parseCsv(readFileSync(join(out, dir, file), "utf8"))
        .map(key)
        .filter((k): k is string => k !== null),
    );
  const sets = (file: string, key: (r: Record<string, string>) => string | null) => {
    const a = rows("since-last", file, key);
    const b = rows("complete", file, key);
    const onlyA = [...a].filter((k) => !b.has(k));
    const onlyB = [...b].filter((k) => !a.has(k));
    return {
      since_last: a.size,
      complete: b.size,
      equal: onlyA.length === 0 && onlyB.length === 0,
      only_since_last: onlyA.slice(0, 10),
      only_complete: onlyB.slice(0, 10),
    };
  };
  const findings = sets("diff.csv", (r) =>
    r.finding === "in_sync" ? null : `${r.identity_id}|${r.finding}`,
  );
  const changes = sets("changes.csv", (r) => `${r.identity_id}|${r.change}|${r.set_by}`);
  const [a, b] = [inc.summary, full.summary];
  const same = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);
  const summary = {
    findings: same(a?.findings, b?.findings),
    new_findings: [a?.changes?.new_findings, b?.changes?.new_findings],
    resolved_findings: [a?.changes?.resolved_findings, b?.changes?.resolved_findings],
    outside: same(a?.changes?.outside, b?.changes?.outside),
    outside_total: [a?.changes?.outside_total, b?.changes?.outside_total],
    since_run_id: [a?.changes?.since_run_id, b?.changes?.since_run_id],
    exit_code: [inc.code, full.code],
  };
  const equal =
    findings.equal &&
    changes.equal &&
    summary.findings &&
    summary.outside &&
    summary.new_findings[0] === summary.new_findings[1] &&
    summary.resolved_findings[0] === summary.resolved_findings[1] &&
    summary.since_run_id[0] === summary.since_run_id[1] &&
    inc.code === full.code;
  return { equal, findings, changes, summary };
}
