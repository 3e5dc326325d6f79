/**
 * Issue 50 §9: a model-based test of the nightly delta. Random sequences of nights, each a random
 * set of outside changes (SELL_ONLY controls removed or added on the platform, the platform's
 * legacy field set or cleared, flags set or cleared in the source) and a random strategy, are run
 * as `reconcile --exit-on changes` through the CLI against the sandbox. The test keeps the ground
 * truth (the platform's controls as it read them after each night, and the source's flags); for
 * every night: `changes.outside` by kind is exact over the identities both nights observed, no
 * identity one of them did not observe is new or resolved, `coverage.not_looked_for` names what
 * the strategy cannot see, and the exit code follows `--exit-on changes`.
 *
 * CM_MODEL_SEQUENCES sets how many sequences (default 2 per backend in `npm test`: each is 4–6
 * nights of CLI runs, about 55 s on PGlite, so 30 would cost the suite about half an hour; raise
 * it for a longer search), CM_MODEL_SEED the seed (printed either way).
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { sql } from "kysely";
import { findingDeltaRows } from "../../src/db/report-queries/finding-delta-queries.ts";
import { NOT_LOOKED_FOR } from "../../src/migration/run/coverage.ts";
import { backends } from "../helpers/db.ts";
import { type ReadWorld, type Row, readWorld, summaryOf, worldIds } from "../helpers/read-world.ts";

const N = 6;
const SEQUENCES = Number(process.env.CM_MODEL_SEQUENCES ?? 2);
const SEED = Number(process.env.CM_MODEL_SEED ?? Date.now() % 2_147_483_647);
const STRATEGIES = ["bulk", "filtered", "per-identity", "auto"] as const;

type Change = {
  readonly k: "remove" | "add" | "flag" | "field";
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
      k: fc.constantFrom("remove", "add", "flag", "field"),
      i: fc.nat({ max: N - 1 }),
      on: fc.boolean(),
    }),
    { maxLength: 4 },
  ),
}) as fc.Arbitrary<Night>;

/** The SELL_ONLY control ids active on each identity. */
const sellOnly = (w: ReadWorld, ids: readonly string[]) =>
  new Map(
    ids.map((id) => [
      id,
      new Set(
        w.sandbox
          .controlsOf(id)
          .filter((c) => c.type === "SELL_ONLY")
          .map((c) => c.id),
      ),
    ]),
  );

/** Identities a run observed: every one for a listing of controls, else those it read. */
async function observed(w: ReadWorld, runId: string): Promise<Set<string> | "all"> {
  const h = await w.target.open({ migrate: false });
  try {
    const r = await sql<{ strategy: string | null; identity_id: string | null }>`
      select r.strategy, s.identity_id from controls_migration.runs r
      left join controls_migration.snapshot_identities s on s.run_id = r.id and s.status = 'found'
      where r.id = ${runId}`.execute(h.db);
    if (r.rows.some((x) => x.strategy === "bulk" || x.strategy === "filtered")) return "all";
    return new Set(r.rows.map((x) => x.identity_id).filter((x): x is string => x !== null));
  } finally {
    await h.close();
  }
}

/**
 * Identities whose state a run knows: those it observed, and those it carries as last seen by an
 * earlier run (carried_findings; identity '': every one).
 */
async function known(w: ReadWorld, runId: string): Promise<Set<string> | "all"> {
  const own = await observed(w, runId);
  if (own === "all") return own;
  const h = await w.target.open({ migrate: false });
  try {
    const r = await sql<{ identity_id: string }>`
      select distinct identity_id from controls_migration.carried_findings
      where run_id = ${runId}`.execute(h.db);
    if (r.rows.some((x) => x.identity_id === "")) return "all";
    return new Set([...own, ...r.rows.map((x) => x.identity_id)]);
  } finally {
    await h.close();
  }
}

const seen = (o: Set<string> | "all", id: string) => o === "all" || o.has(id);

/** Applies one night's outside changes; returns what they changed in the source. */
async function applyChanges(w: ReadWorld, ids: readonly string[], n: Night, flags: boolean[]) {
  const h = await w.target.open({ migrate: false });
  try {
    for (const c of n.changes) {
      const id = ids[c.i] ?? "";
      if (c.k === "remove") {
        for (const ctl of w.sandbox.controlsOf(id).filter((x) => x.type === "SELL_ONLY")) {
          w.sandbox.deleteControl(ctl.id);
        }
      } else if (c.k === "add" && w.sandbox.controlsOf(id).every((x) => x.type !== "SELL_ONLY")) {
        w.sandbox.addControl(id, { type: "SELL_ONLY", set_by: "SET_BY_CLIENT" });
      } else if (c.k === "field") {
        w.sandbox.setLegacyFields(id, { user_disabled: c.on });
      } else if (c.k === "flag") {
        flags[c.i] = c.on;
        await sql`update identities set user_disabled = ${c.on} where id = ${id}`.execute(h.db);
      }
    }
  } finally {
    await h.close();
  }
}

/** Runs one sequence of nights and checks each against the ground truth. */
async function sequence(backend: (typeof backends)[number], nights: readonly Night[], seq: number) {
  const ids = worldIds(N, 7000 + seq);
  const flags = ids.map((_, i) => i % 2 === 0);
  const rows: Row[] = ids.map((id, i) => [id, flags[i] ?? false, false]);
  const w = await readWorld(backend, rows);
  try {
    let prev = await w.run("reconcile", "--state", "bulk");
    let prevId = summaryOf(prev).run_id;
    let before = sellOnly(w, ids);
    let flagsBefore = [...flags];
    for (const n of nights) {
      await applyChanges(w, ids, n, flags);
      const truth = sellOnly(w, ids);
      const r = await w.run("reconcile", "--state", n.strategy, "--exit-on", "changes");
      const s = summaryOf(r);
      const label = `${n.strategy} after ${JSON.stringify(n.changes)}: ${r.stderr.slice(-1500)}`;
      const [now, then] = [await observed(w, s.run_id), await observed(w, prevId)];
      const thenKnown = await known(w, prevId);
      let removed = 0;
      let added = 0;
      for (const id of ids) {
        const [b, a] = [before.get(id) ?? new Set(), truth.get(id) ?? new Set()];
        // Compared only where both nights observed the identity.
        if (!seen(now, id) || !seen(then, id)) continue;
        removed += [...b].filter((c) => !a.has(c)).length;
        added += [...a].filter((c) => !b.has(c)).length;
      }
      const o = s.changes?.outside ?? {};
      assert.equal(o.control_removed, removed, `control_removed, ${label}`);
      assert.equal(o.control_added, added, `control_added, ${label}`);
      const set = flags.filter((f, i) => f && !flagsBefore[i]).length;
      const cleared = flags.filter((f, i) => !f && flagsBefore[i]).length;
      assert.equal(o.flag_set, set, `flag_set, ${label}`);
      assert.equal(o.flag_cleared, cleared, `flag_cleared, ${label}`);
      assert.deepEqual(s.coverage?.not_looked_for, NOT_LOOKED_FOR[s.strategy ?? ""], label);
      const changes = (s.changes?.outside_total ?? 0) + (s.changes?.new_client_work ?? 0);
      assert.equal(r.code, changes > 0 ? 2 : 0, `exit code, ${label}`);
      const h = await w.target.open({ migrate: false });
      try {
        for (const side of ["added", "resolved"] as const) {
          for (const f of await findingDeltaRows(h.db, s.run_id, prevId, side, 1000)) {
            if (f.identity_id === null) continue;
            // New or resolved only where this night observed it and the last knew it.
            assert.ok(
              seen(now, f.identity_id) && seen(thenKnown, f.identity_id),
              `${side} ${label}`,
            );
          }
        }
      } finally {
        await h.close();
      }
      // The next night compares with this one after its writes.
      prev = r;
      prevId = s.run_id;
      before = sellOnly(w, ids);
      flagsBefore = [...flags];
    }
  } finally {
    await w.close();
  }
}

for (const backend of backends) {
  describe(`the nightly delta against a ground-truth model on ${backend.name}`, () => {
    after(() => {
      console.log(`nightly model on ${backend.name}: seed ${SEED}, ${SEQUENCES} sequences`);
    });
    it(`holds over ${SEQUENCES} random sequences of 4–6 nights (seed ${SEED}; CM_MODEL_SEQUENCES, CM_MODEL_SEED)`, {
      timeout: 3_600_000,
    }, async () => {
      let seq = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(night, { minLength: 4, maxLength: 6 }), async (nights) => {
          seq += 1;
          await sequence(backend, nights, seq);
        }),
        { numRuns: SEQUENCES, seed: SEED, endOnFailure: true },
      );
    });
  });
}
