/**
 * `--wait-for-platform-s N` (issue 27): an identity whose user_disabled is true here and on the
 * platform, without its CLIENT SELL_ONLY, is first sighted (journaled) and left to the platform;
 * a run more than N seconds after that first sighting creates it. A sighting is forgotten once the
 * identity is no longer awaiting (its flag here and the platform's legacy field both cleared too),
 * so a later return waits afresh.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { Sandbox } from "controls-sandbox";
import { sql } from "kysely";
import { syntheticIdentities } from "../../src/contract/index.ts";
import type { DatabaseHandle } from "../../src/db/connection/connect.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { runCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { assertExactlyOnce, clientSellOnly } from "../helpers/platform-assertions.ts";

const N = 300;
const SEED = 53;
const WAIT_S = 1;
const awaited = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).map((r) => r.id);
/** An identity with neither flag, here or on the platform, that the last test flags and clears. */
const CLEAN = [...syntheticIdentities(N, SEED)].find((r) => !r.user_disabled && !r.admin_disabled)
  ?.id as string;

type Db = DatabaseHandle["db"];

interface Sighting {
  readonly identity_id: string;
  readonly first_seen_at: Date;
  /** The database's clock when read: the wait is measured on it. */
  readonly now: Date;
}

for (const backend of backends) {
  describe(`--wait-for-platform-s on ${backend.name}`, { timeout: 180_000 }, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    let rig: CliRig;
    const out = mkdtempSync(join(tmpdir(), "cm-e2e-wait-s-"));
    let runs = 0;
    const apply = () =>
      runCli(
        [
          "apply",
          "--state",
          "bulk",
          "--wait-for-platform-s",
          String(WAIT_S),
          "--yes",
          "--json",
          "--no-progress",
          "--out",
          join(out, `apply-${++runs}`),
          ...target.args,
        ],
        env,
      );

    /**
     * Opens the database for `work`, between two CLI runs (PGlite: one process at a time). Work
     * that reads and then changes it, with no run between, shares one open: each open of PGlite
     * costs this process most of a second of CPU.
     */
    async function inDatabase<T>(work: (db: Db) => Promise<T>): Promise<T> {
      const h = await target.open();
      try {
        return await work(h.db);
      } finally {
        await h.close();
      }
    }

    /** The user_disabled sightings recorded, with the database's clock. */
    async function sightingsIn(db: Db): Promise<Sighting[]> {
      const r = await sql<Sighting>`
        select identity_id, first_seen_at, now() as now
        from ${sql.table(TOOL_TABLES.platformWaitSightings)}
        where flag = 'user_disabled' order by identity_id`.execute(db);
      return r.rows.map((s) => ({
        ...s,
        first_seen_at: new Date(s.first_seen_at),
        now: new Date(s.now),
      }));
    }
    const sightings = () => inDatabase(sightingsIn);

    /** Until the database's clock is past the latest first sighting plus N seconds. */
    async function untilWaitIsOver(seen: readonly Sighting[]): Promise<void> {
      const latest = Math.max(...seen.map((s) => s.first_seen_at.getTime()));
      const now = seen[0]?.now.getTime() ?? Date.now();
      // The time the test is about: N seconds after the first sighting, on the database's clock.
      await delay(Math.max(0, latest + WAIT_S * 1000 - now) + 50);
    }

    /**
     * Every awaited identity holding its control, as the first test leaves it; made so here (a
     * sighting, the wait, the create) when a test runs without the first.
     */
    async function allInSync(): Promise<void> {
      if (awaited.every((id) => clientSellOnly(sandbox, id).length === 1)) return;
      const sighted = await apply();
      assert.equal(sighted.code, 0, sighted.stderr);
      await untilWaitIsOver(await sightings());
      const created = await apply();
      assert.equal(created.code, 0, created.stderr);
      assertExactlyOnce(sandbox, awaited, "before the test");
    }

    /** Sets an identity's user_disabled in the source relation (the default, `identities`). */
    async function setSourceFlagIn(db: Db, id: string, value: boolean): Promise<void> {
      await sql`update identities set user_disabled = ${value} where id = ${id}`.execute(db);
    }

    before(async () => {
      rig = await startCliRig(backend, { identities: N, seed: SEED });
      ({ sandbox, target } = rig);
      env = { ...rig.env, CONTROLS_WAIT_FOR_PLATFORM: "true" };
      assert.ok(awaited.length > 10, `identities awaiting the platform: ${awaited.length}`);
      for (const id of awaited) {
        assert.equal(sandbox.legacyFieldsOf(id).user_disabled, true);
        assert.equal(clientSellOnly(sandbox, id).length, 0);
      }
    });
    after(async () => {
      await rig.close();
      rmSync(out, { recursive: true, force: true });
    });

    it("records the first sighting and creates nothing, then creates each awaited control in a run more than N seconds after it", async () => {
      const creates = sandbox.stats().writes.creates;
      const first = await apply();
      assert.equal(first.code, 0, first.stderr);
      assert.equal(sandbox.stats().writes.creates, creates, "nothing created on a first sighting");
      const seen = await sightings();
      assert.deepEqual(
        seen.map((s) => s.identity_id),
        [...awaited].sort(),
      );

      await untilWaitIsOver(seen);
      const second = await apply();
      assert.equal(second.code, 0, second.stderr);
      assert.equal(sandbox.stats().writes.creates - creates, awaited.length);
      assertExactlyOnce(sandbox, awaited);
    });

    it("forgets a sighting once the identity is in sync, so an identity awaiting again waits afresh", async () => {
      await allInSync();
      const third = await apply();
      assert.equal(third.code, 0, third.stderr);
      assert.deepEqual(
        await sightings(),
        [],
        "every awaited identity is in sync: no sighting left",
      );

      // The identity's control goes (say the platform's UI): it is awaiting the platform again.
      const back = awaited[0] as string;
      const control = clientSellOnly(sandbox, back)[0];
      assert.ok(control);
      sandbox.deleteControl(control.id);
      const creates = sandbox.stats().writes.creates;
      const fourth = await apply();
      assert.equal(fourth.code, 0, fourth.stderr);
      assert.equal(sandbox.stats().writes.creates, creates, "a fresh wait: nothing created yet");
      assert.equal(clientSellOnly(sandbox, back).length, 0);
      const seen = await sightings();
      assert.deepEqual(
        seen.map((s) => s.identity_id),
        [back],
      );

      await untilWaitIsOver(seen);
      const fifth = await apply();
      assert.equal(fifth.code, 0, fifth.stderr);
      assert.equal(clientSellOnly(sandbox, back).length, 1);
    });

    it("forgets the first sighting of an identity whose source flag and platform legacy field are both cleared, so that awaiting again later it waits afresh", async () => {
      assert.ok(CLEAN);
      // Only this identity's: the previous test's last create is forgotten by the next run.
      const ofClean = (seen: Sighting[]) => seen.filter((x) => x.identity_id === CLEAN);
      // Flagged here and on the platform, without its control: awaiting, first sighted.
      const earlier = await inDatabase(async (db) => {
        const seen = ofClean(await sightingsIn(db));
        await setSourceFlagIn(db, CLEAN, true);
        return seen;
      });
      assert.deepEqual(earlier, [], "no sighting of it before it was flagged");
      sandbox.setLegacyFields(CLEAN, { user_disabled: true });
      const creates = sandbox.stats().writes.creates;
      const sighted = await apply();
      assert.equal(sighted.code, 0, sighted.stderr);
      assert.equal(sandbox.stats().writes.creates, creates, "nothing created on a first sighting");
      // Both cleared: the identity is no candidate and no listing keeps it, yet its sighting goes.
      const first = await inDatabase(async (db) => {
        const seen = ofClean(await sightingsIn(db));
        await setSourceFlagIn(db, CLEAN, false);
        return seen;
      });
      assert.deepEqual(
        first.map((s) => s.identity_id),
        [CLEAN],
      );
      sandbox.setLegacyFields(CLEAN, { user_disabled: false });
      const cleared = await apply();
      assert.equal(cleared.code, 0, cleared.stderr);
      // Flagged again once the first sighting is older than N seconds: a fresh wait, no create.
      const left = await inDatabase(async (db) => {
        const seen = await sightingsIn(db);
        await untilWaitIsOver(first);
        await setSourceFlagIn(db, CLEAN, true);
        return seen;
      });
      assert.deepEqual(left, [], "the cleared identity's sighting is forgotten");
      sandbox.setLegacyFields(CLEAN, { user_disabled: true });
      const again = await apply();
      assert.equal(again.code, 0, again.stderr);
      assert.equal(sandbox.stats().writes.creates, creates, "a fresh wait: nothing created yet");
      assert.equal(clientSellOnly(sandbox, CLEAN).length, 0);
      const anew = ofClean(await sightings());
      assert.deepEqual(
        anew.map((s) => s.identity_id),
        [CLEAN],
      );
      assert.ok(
        (anew[0] as Sighting).first_seen_at > (first[0] as Sighting).first_seen_at,
        "the wait starts at the new sighting",
      );
    });
  });
}
