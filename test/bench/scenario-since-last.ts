/**
 * Scenario n — a night of `--since-last` (issue 55): two complete reconciles of a sandbox, then
 * outside changes of every kind (controls removed and added and legacy fields set and cleared on
 * the platform, flags set and cleared and rows deleted in the source), then `plan --since-last`
 * and a complete `plan --state bulk` on the same world and database. Reports the listing and
 * by-id requests each made (as the sandbox counted them), their wall time, and their findings
 * compared identity by identity (diff.csv). PostgreSQL only: the source's changes are made
 * through a PostgreSQL client. Default 100,000 identities and 1,000 changes (quick: 20,000 and
 * 100); `--sizes N` runs the largest N given (the figure is at 1,000,000).
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
} from "./scenario-kit.ts";
import { type DbTarget, openTarget, seedTarget } from "./scenario-postgres.ts";

const SEED = 55;
const TIMEOUT_MS = 60 * 60_000;
const LISTING = "GET /v2/identity/identities";
const BY_ID = "GET /v2/identity/identities/:id";

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
        ...["reconcile", "--state", "bulk", "--yes"],
      ]);
      expectExit(run.run, [0, 2], `complete reconcile #${night}`);
    }
    const made = await changeWorld(kit, sandbox, target, identities, changes);
    const inc = await tool(kit, sandbox, target, out, "since-last", [
      ...["plan", "--since-last", "--since-margin-s", "0"],
    ]);
    const full = await tool(kit, sandbox, target, out, "complete", ["plan", "--state", "bulk"]);
    const compared = compareFindings(join(out, "since-last"), join(out, "complete"));
    const figures = {
      backend: "postgres",
      identities,
      outside_changes: made,
      since_last: inc.figures,
      complete: full.figures,
      request_ratio: round(
        (inc.figures.listing + inc.figures.by_id) / (full.figures.listing + full.figures.by_id),
        4,
      ),
      findings: compared,
      coverage: inc.run.summary?.coverage ?? null,
    };
    kit.log(`  ${JSON.stringify(figures)}`);
    return {
      setup: {
        what: "two complete reconciles, outside changes of every kind, then plan --since-last (margin 0) and plan --state bulk on the same world and database",
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

/** The two reports' findings (diff.csv, in_sync left out), compared identity by identity. */
function compareFindings(incDir: string, fullDir: string) {
  const read = (dir: string) =>
    new Set(
      parseCsv(readFileSync(join(dir, "diff.csv"), "utf8"))
        .filter((r) => r.finding !== "in_sync")
        .map((r) => `${r.identity_id}|${r.finding}`),
    );
  const inc = read(incDir);
  const full = read(fullDir);
  const onlyInc = [...inc].filter((k) => !full.has(k));
  const onlyFull = [...full].filter((k) => !inc.has(k));
  return {
    since_last: inc.size,
    complete: full.size,
    equal: onlyInc.length === 0 && onlyFull.length === 0,
    only_since_last: onlyInc.slice(0, 10),
    only_complete: onlyFull.slice(0, 10),
  };
}
