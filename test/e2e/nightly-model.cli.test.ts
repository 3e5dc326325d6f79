/**
 * Issue 50 §9: a model-based test of the nightly delta. Random sequences of nights, each a random
 * set of outside changes (SELL_ONLY controls removed or added on the platform, the platform's
 * legacy field set or cleared, flags set or cleared in the source, source rows deleted, platform
 * identities deleted, the platform's own migration of an identity) and a random strategy, are run
 * as `reconcile --exit-on changes` against the sandbox over HTTP. The test keeps the ground
 * truth (the platform's controls as it read them after each night, its legacy fields, which
 * identities it still holds, and the source's rows and flags); for every night: `changes.outside`
 * by kind is exact over the identities both nights observed (controls, flags, rows removed, the
 * platform's legacy fields set and cleared), no identity this night did not observe or the last
 * did not know is new or resolved, `coverage.not_looked_for` names what the strategy cannot see,
 * and the exit code follows `--exit-on changes`.
 *
 * The backend's first sequence starts through the CLI (its first reconcile and first night: a
 * child process, the database closed for it); every other night runs the same command's pipeline
 * in this process (`ReadWorld.runIn`: the settings from the same flags and env, the platform over
 * HTTP, the same database held open for the sequence, its journal emptied between sequences), and
 * every night's journal facts are read on that one open. A sequence through the CLI cost about 30 s of
 * CPU on PGlite (a CLI child and eight opens of the database a night, each about 0.8 s); in
 * process about 1.3–1.7 s, the database's own work.
 *
 * CM_MODEL_SEQUENCES sets how many sequences (default 30 per backend, about 50–60 s of CPU on
 * PGlite; raise it for a longer search), CM_MODEL_SEED the seed (printed either way).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { sql } from "kysely";
import type { DatabaseHandle } from "../../src/db/connection/connect.ts";
import { findingDeltaRows } from "../../src/db/report-queries/finding-delta-queries.ts";
import { NOT_LOOKED_FOR } from "../../src/migration/run/coverage.ts";
import { backends } from "../helpers/db.ts";
import { type ReadWorld, readWorld, summaryOf, worldIds } from "../helpers/read-world.ts";

type Db = DatabaseHandle["db"];

const N = 6;
const SEQUENCES = Number(process.env.CM_MODEL_SEQUENCES ?? 30);
/**
 * Nights of the backend's first sequence run through the CLI, after its first reconcile (which
 * does too); every other night runs in process.
 */
const CLI_NIGHTS = 1;
const SEED = Number(process.env.CM_MODEL_SEED ?? Date.now() % 2_147_483_647);
const STRATEGIES = ["bulk", "filtered", "per-identity", "auto"] as const;

const KINDS = ["remove", "add", "flag", "field", "dropRow", "dropIdentity", "migrate"] as const;
type Change = {
  readonly k: (typeof KINDS)[number];
  readonly i: number;
  readonly on: boolean;
};
interface Night {
  readonly strategy: (typeof STRATEGIES)[number];
  readonly changes: readonly Change[];
}

const night = fc.record({
  strategy: fc.constantFrom(...STRATEGIES),
  changes: fc.array(
    fc.record({
      k: fc.constantFrom(...KINDS),
      i: fc.nat({ max: N - 1 }),
      on: fc.boolean(),
    }),
    { maxLength: 4 },
  ),
}) as fc.Arbitrary<Night>;

/** The world as the test knows it: per identity, its source row, flag, platform field, life. */
interface Truth {
  readonly flags: boolean[];
  readonly present: boolean[];
  readonly fields: boolean[];
  readonly alive: boolean[];
}

/** The SELL_ONLY control ids active on each identity (none on one the platform deleted). */
const sellOnly = (w: ReadWorld, ids: readonly string[], t: Truth) =>
  new Map(
    ids.map((id, i) => [
      id,
      new Set(
        t.alive[i]
          ? w.sandbox
              .controlsOf(id)
              .filter((c) => c.type === "SELL_ONLY")
              .map((c) => c.id)
          : [],
      ),
    ]),
  );

/** The database of a backend's sequences: held open while no CLI child needs it. */
interface Journal {
  readonly w: ReadWorld;
  handle: DatabaseHandle | null;
}

async function dbOf(j: Journal): Promise<DatabaseHandle> {
  j.handle ??= await j.w.target.open({ migrate: false });
  return j.handle;
}

/** Closes the database for a CLI child (PGlite allows one process at a time). */
async function release(j: Journal): Promise<void> {
  const h = j.handle;
  j.handle = null;
  await h?.close();
}

/**
 * Identities a run observed: every one for a listing of controls, else those it read (found, or
 * answered 404).
 */
async function observed(db: Db, runId: string): Promise<Set<string> | "all"> {
  const r = await sql<{ strategy: string | null; identity_id: string | null }>`
    select r.strategy, s.identity_id from controls_migration.runs r
    left join controls_migration.snapshot_identities s on s.run_id = r.id
      and s.status in ('found', 'not_found')
    where r.id = ${runId}`.execute(db);
  if (r.rows.some((x) => x.strategy === "bulk" || x.strategy === "filtered")) return "all";
  return new Set(r.rows.map((x) => x.identity_id).filter((x): x is string => x !== null));
}

/**
 * Identities whose state a run knows: those it observed, and those it carries as last seen by an
 * earlier run (carried_findings; identity '': every one).
 */
async function known(db: Db, runId: string): Promise<Set<string> | "all"> {
  const own = await observed(db, runId);
  if (own === "all") return own;
  const r = await sql<{ identity_id: string }>`
    select distinct identity_id from controls_migration.carried_findings
    where run_id = ${runId}`.execute(db);
  if (r.rows.some((x) => x.identity_id === "")) return "all";
  return new Set([...own, ...r.rows.map((x) => x.identity_id)]);
}

const seen = (o: Set<string> | "all", id: string) => o === "all" || o.has(id);

/**
 * What a run's journal says of its reads: the identities it recorded gone (404, or
 * identity_not_found), and those whose platform legacy fields it read (a complete listing: every
 * identity, an unkept one had both false).
 */
async function journalOf(db: Db, runId: string) {
  const r = await sql<{ identity_id: string; gone: boolean; field: boolean }>`
    select identity_id, status = 'not_found' as gone,
      status = 'found' and platform_user_disabled is not null as field
    from controls_migration.snapshot_identities where run_id = ${runId}
    union all
    select identity_id, true, false from controls_migration.findings
    where run_id = ${runId} and finding = 'identity_not_found' and identity_id is not null`.execute(
    db,
  );
  const bulk = await sql<{ n: number }>`select count(*)::int as n from controls_migration.runs
    where id = ${runId} and strategy = 'bulk'`.execute(db);
  const gone = new Set(r.rows.filter((x) => x.gone).map((x) => x.identity_id));
  const fields: Set<string> | "all" =
    (bulk.rows[0]?.n ?? 0) > 0
      ? "all"
      : new Set(r.rows.filter((x) => x.field).map((x) => x.identity_id));
  return { gone, fields };
}

/** Applies one night's outside changes to the world and to the truth. */
async function applyChanges(j: Journal, ids: readonly string[], n: Night, t: Truth) {
  const w = j.w;
  const db = (await dbOf(j)).db;
  for (const c of n.changes) {
    const id = ids[c.i] ?? "";
    const holds = (setBy: string) =>
      w.sandbox.controlsOf(id).some((x) => x.type === "SELL_ONLY" && x.set_by === setBy);
    if (c.k === "dropRow" && t.present[c.i]) {
      t.present[c.i] = false;
      t.flags[c.i] = false;
      await sql`delete from identities where id = ${id}`.execute(db);
    } else if (c.k === "flag" && t.present[c.i]) {
      t.flags[c.i] = c.on;
      await sql`update identities set user_disabled = ${c.on} where id = ${id}`.execute(db);
    } else if (!t.alive[c.i]) {
      // The platform deleted it: no control and no field of it changes any more.
    } else if (c.k === "dropIdentity") {
      t.alive[c.i] = false;
      w.sandbox.removeIdentity(id);
    } else if (c.k === "migrate" && t.fields[c.i] && !holds("SET_BY_CLIENT")) {
      // The platform's own migration of user_disabled, as its background job writes it.
      const reason = "migrated from user_disabled";
      w.sandbox.addControl(id, { type: "SELL_ONLY", set_by: "SET_BY_CLIENT", reason });
    } else if (c.k === "remove") {
      for (const ctl of w.sandbox.controlsOf(id).filter((x) => x.type === "SELL_ONLY")) {
        w.sandbox.deleteControl(ctl.id);
      }
    } else if (c.k === "add" && w.sandbox.controlsOf(id).every((x) => x.type !== "SELL_ONLY")) {
      w.sandbox.addControl(id, { type: "SELL_ONLY", set_by: "SET_BY_CLIENT" });
    } else if (c.k === "field") {
      t.fields[c.i] = c.on;
      w.sandbox.setLegacyFields(id, { user_disabled: c.on });
    }
  }
}

/** What the test knew after the night before: its run, controls and truth. */
interface Before {
  readonly runId: string;
  readonly controls: Map<string, Set<string>>;
  readonly truth: Truth;
}

const copy = (t: Truth): Truth => ({
  flags: [...t.flags],
  present: [...t.present],
  fields: [...t.fields],
  alive: [...t.alive],
});

/**
 * One night's `reconcile --exit-on changes`: through the CLI (a child process; the database
 * closed for it), or the same command's pipeline in this process on the database held open.
 */
async function reconcile(j: Journal, state: string, cli: boolean, exitOn: boolean) {
  if (cli) {
    await release(j);
    return j.w.run("reconcile", "--state", state, ...(exitOn ? ["--exit-on", "changes"] : []));
  }
  return j.w.runIn(await dbOf(j), "reconcile", {
    state,
    ...(exitOn ? { "exit-on": "changes" } : {}),
  });
}

/** Checks one night's summary against the ground truth. */
async function checkNight(
  j: Journal,
  ids: readonly string[],
  n: Night,
  b: Before,
  t: Truth,
  cli: boolean,
) {
  const w = j.w;
  const controls = sellOnly(w, ids, t);
  const r = await reconcile(j, n.strategy, cli, true);
  const s = summaryOf(r);
  const via = cli ? "CLI" : "in process";
  const label = `${n.strategy} (${via}) after ${JSON.stringify(n.changes)}: ${r.stderr.slice(-1500)}`;
  // Every journal fact of this night and the last, on one open of the database.
  const h = await dbOf(j);
  const [now, then] = [await observed(h.db, s.run_id), await observed(h.db, b.runId)];
  const thenKnown = await known(h.db, b.runId);
  const [jNow, jThen] = [await journalOf(h.db, s.run_id), await journalOf(h.db, b.runId)];
  const count = { removed: 0, added: 0, fieldSet: 0, fieldCleared: 0 };
  ids.forEach((id, i) => {
    const [was, is] = [b.controls.get(id) ?? new Set(), controls.get(id) ?? new Set()];
    // Compared only where both nights observed the identity; one a night found gone is
    // identity_vanished, not its controls removed.
    if (!seen(now, id) || !seen(then, id)) return;
    if (!jNow.gone.has(id)) count.removed += [...was].filter((c) => !is.has(c)).length;
    if (!jThen.gone.has(id)) count.added += [...is].filter((c) => !was.has(c)).length;
    // The platform's legacy field: where both nights read it of an identity the platform holds.
    if (!t.alive[i] || !seen(jNow.fields, id) || !seen(jThen.fields, id)) return;
    if (t.fields[i] && !b.truth.fields[i]) count.fieldSet += 1;
    if (!t.fields[i] && b.truth.fields[i]) count.fieldCleared += 1;
  });
  const o = s.changes?.outside ?? {};
  assert.equal(o.control_removed, count.removed, `control_removed, ${label}`);
  assert.equal(o.control_added, count.added, `control_added, ${label}`);
  assert.equal(o.platform_field_set, count.fieldSet, `platform_field_set, ${label}`);
  assert.equal(o.platform_field_cleared, count.fieldCleared, `platform_field_cleared, ${label}`);
  const [f, f0] = [t.flags, b.truth.flags];
  const kept = (i: number) => t.present[i] === true;
  assert.equal(o.flag_set, f.filter((x, i) => kept(i) && x && !f0[i]).length, `flag_set, ${label}`);
  const cleared = f.filter((x, i) => kept(i) && !x && f0[i]).length;
  assert.equal(o.flag_cleared, cleared, `flag_cleared, ${label}`);
  // A flagged row deleted from the source: the last night held it, this one finds it gone.
  const gone = f0.filter((x, i) => x && !kept(i) && b.truth.present[i]).length;
  assert.equal(o.source_row_removed, gone, `source_row_removed, ${label}`);
  assert.deepEqual(s.coverage?.not_looked_for, NOT_LOOKED_FOR[s.strategy ?? ""], label);
  const changes = (s.changes?.outside_total ?? 0) + (s.changes?.new_client_work ?? 0);
  assert.equal(r.code, changes > 0 ? 2 : 0, `exit code, ${label}`);
  for (const side of ["added", "resolved"] as const) {
    for (const x of await findingDeltaRows(h.db, s.run_id, b.runId, side, 1000)) {
      if (x.identity_id === null) continue;
      // New or resolved only where this night observed it and the last knew it.
      assert.ok(seen(now, x.identity_id) && seen(thenKnown, x.identity_id), `${side} ${label}`);
    }
  }
  // The next night compares with this one after its writes.
  return { runId: s.run_id, controls: sellOnly(w, ids, t), truth: copy(t) };
}

/**
 * Makes the world a new sequence's: the platform holds every identity (legacy fields as the
 * flags, no control), the source every row, and the journal no run (its tables emptied: a fresh
 * database's, without opening another; on PGlite that costs about 1 s of CPU).
 */
async function startSequence(j: Journal, ids: readonly string[], flags: readonly boolean[]) {
  const { sandbox } = j.w;
  sandbox.reset();
  sandbox.seedIdentities(
    ids.map((id, i) => ({ id, user_disabled: flags[i] ?? false, admin_disabled: false })),
    { migratedFraction: 0, driftFraction: 0 },
  );
  const { db } = await dbOf(j);
  const tables = await sql<{ name: string }>`select tablename as name from pg_tables
    where schemaname = 'controls_migration' and tablename not like 'kysely_%'`.execute(db);
  if (tables.rows.length > 0) {
    const all = tables.rows.map((x) => sql.table(`controls_migration.${x.name}`));
    await sql`truncate ${sql.join(all)} restart identity`.execute(db);
  }
  await sql`delete from identities`.execute(db);
  const rows = ids.map((id, i) => sql`(${id}, ${flags[i] ?? false}, false)`);
  await sql`insert into identities values ${sql.join(rows)}`.execute(db);
}

/**
 * Runs one sequence of nights and checks each against the ground truth. The backend's first
 * sequence starts through the CLI (its first reconcile and `CLI_NIGHTS` nights); every other
 * night runs the same command's pipeline in this process, on the database held open.
 */
async function sequence(j: Journal, nights: readonly Night[], seq: number) {
  const cli = (night: number) => seq === 1 && night <= CLI_NIGHTS;
  const ids = worldIds(N, 7000 + seq);
  const flags = ids.map((_, i) => i % 2 === 0);
  const t: Truth = {
    flags,
    present: ids.map(() => true),
    fields: [...flags],
    alive: ids.map(() => true),
  };
  await startSequence(j, ids, flags);
  const first = await reconcile(j, "bulk", cli(0), false);
  let b: Before = {
    runId: summaryOf(first).run_id,
    controls: sellOnly(j.w, ids, t),
    truth: copy(t),
  };
  for (const [i, n] of nights.entries()) {
    await applyChanges(j, ids, n, t);
    b = await checkNight(j, ids, n, b, t, cli(i + 1));
  }
}

for (const backend of backends) {
  describe(`the nightly delta against a ground-truth model on ${backend.name}`, () => {
    let j: Journal;
    before(async () => {
      j = { w: await readWorld(backend, []), handle: null };
    });
    after(async () => {
      console.log(`nightly model on ${backend.name}: seed ${SEED}, ${SEQUENCES} sequences`);
      await release(j);
      await j.w.close();
    });
    it(`holds over ${SEQUENCES} random sequences of 4–6 nights (seed ${SEED}; CM_MODEL_SEQUENCES, CM_MODEL_SEED)`, {
      timeout: 3_600_000,
    }, async () => {
      let seq = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(night, { minLength: 4, maxLength: 6 }), async (nights) => {
          seq += 1;
          await sequence(j, nights, seq);
        }),
        { numRuns: SEQUENCES, seed: SEED, endOnFailure: true },
      );
      assert.equal(seq, SEQUENCES);
    });
  });
}
