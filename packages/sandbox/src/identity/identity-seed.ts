import { prng, syntheticIdentities } from "../shared.ts";
import type { NewControl, SandboxStore, StoredIdentity } from "./identity-store.ts";
import { applyLegacyDrift } from "./legacy-drift.ts";
import { type SeedRow, toNewIdentity } from "./seed-row.ts";
import type { SetBySpelling } from "./set-by.ts";
import { DRIFT_KINDS, type DriftKind, type SeedReport } from "./types.ts";

export interface ResolvedSeedOptions {
  migratedFraction: number;
  driftFraction: number;
  legacyDriftFraction: number;
  seed: number;
  setBy: SetBySpelling;
}

/** Synthetic identities are created from this instant on, two per second (ties exercise the id tie-break). */
const SYNTHETIC_EPOCH_MS = Date.UTC(2021, 0, 1);

/**
 * The shared synthetic identities with deterministic created_at values, so the same (count, seed)
 * gives the same pages on every run.
 *
 * @example
 *   sandbox.seedIdentities(syntheticSeedRows(1000, 7));
 */
export function* syntheticSeedRows(count: number, seed: number): Generator<SeedRow> {
  let i = 0;
  for (const row of syntheticIdentities(count, seed)) {
    yield { ...row, createdAtMs: SYNTHETIC_EPOCH_MS + Math.floor(i / 2) * 1000 };
    i++;
  }
}

function checkFraction(name: string, v: number): void {
  if (!(typeof v === "number" && v >= 0 && v <= 1)) {
    throw new RangeError(`${name} must be between 0 and 1, got ${v}`);
  }
}

/** FNV-1a over the id: the same id draws the same defaults, whatever the seed order or count. */
function applicableDrift(i: StoredIdentity): DriftKind[] {
  return DRIFT_KINDS.filter((k) => {
    switch (k) {
      case "client_control_without_flag":
        return !i.user_disabled;
      case "service_control_without_flag":
        return !i.admin_disabled;
      case "service_control_missing":
        return i.admin_disabled && i.user_disabled;
      case "client_not_overridable":
      case "duplicate_client_sell_only":
        return i.user_disabled;
      case "set_by_other_spelling":
        return i.user_disabled || i.admin_disabled;
      default:
        return true;
    }
  });
}

const sellOnly = (set_by: string, is_overridable: boolean, reason: string): NewControl => ({
  type: "SELL_ONLY",
  set_by,
  is_overridable,
  reason_code: set_by.endsWith("SERVICE") ? "ADMINISTRATIVE" : "OTHER",
  reason,
});

/**
 * Adds identities and plays the platform's legacy-flag transition on them: a `migratedFraction`
 * of the flagged identities gets its flags as SELL_ONLY controls (user_disabled → client,
 * overridable; admin_disabled → service, not overridable, set_by spelled as `opts.setBy` says); a
 * `driftFraction` of all identities gets one kind of drift. Deterministic for a given seed and
 * row order. Throws RangeError on a bad row before changing anything.
 *
 * @example
 *   const report = seedStore(store, rows, { migratedFraction: 0.5, driftFraction: 0.1, seed: 1 }, clock);
 *   report.drift.extra_frozen; // how many FROZEN controls were injected
 */
export function seedStore(
  store: SandboxStore,
  rows: Iterable<SeedRow>,
  opts: ResolvedSeedOptions,
  clock: () => number,
): SeedReport {
  checkFraction("migratedFraction", opts.migratedFraction);
  checkFraction("driftFraction", opts.driftFraction);
  const prepared: StoredIdentity[] = [];
  let index = 0;
  for (const row of rows) prepared.push(toNewIdentity(row, index++, clock));
  checkFraction("legacyDriftFraction", opts.legacyDriftFraction);
  const { added, skipped } = store.addIdentities(prepared);
  const report = store.active.batch(() => playTransition(store, added, skipped, opts));
  report.legacyDrift = applyLegacyDrift(added, opts.legacyDriftFraction, opts.seed);
  return report;
}

function playTransition(
  store: SandboxStore,
  added: readonly StoredIdentity[],
  skipped: number,
  opts: ResolvedSeedOptions,
): SeedReport {
  const { setBy } = opts;
  const report = emptyReport(added.length, skipped);
  const randMigrate = prng(Math.imul(opts.seed, 0x9e3779b1) ^ 0x2545f491);
  const randDrift = prng(opts.seed ^ 0x68e31da4);
  const create = (identity: StoredIdentity, c: NewControl) => {
    store.insertControl(identity, c);
    report.controlsCreated++;
  };

  for (const identity of added) {
    const ud = identity.user_disabled;
    const ad = identity.admin_disabled;
    if (ud) report.userDisabled++;
    if (ad) report.adminDisabled++;
    if (ud || ad) report.flagged++;
    // Both streams are drawn for every identity so that one fraction never shifts the other.
    const migrateDraw = randMigrate();
    const driftDraw = randDrift();
    const kindDraw = randDrift();
    let kind: DriftKind | undefined;
    if (driftDraw < opts.driftFraction) {
      const kinds = applicableDrift(identity);
      kind = kinds[Math.floor(kindDraw * kinds.length)];
    }
    const forced =
      kind === "set_by_other_spelling" ||
      kind === "client_not_overridable" ||
      kind === "duplicate_client_sell_only" ||
      kind === "service_control_missing";
    const migrated = (ud || ad) && (migrateDraw < opts.migratedFraction || forced);
    if (migrated) {
      report.migrated++;
      const spelled = kind === "set_by_other_spelling" ? setBy.other : setBy;
      if (ud) {
        const overridable = kind !== "client_not_overridable";
        create(identity, sellOnly(spelled.client, overridable, "migrated from user_disabled"));
        report.migrationControls.client++;
      }
      if (ad && kind !== "service_control_missing") {
        create(identity, sellOnly(spelled.service, false, "migrated from admin_disabled"));
        report.migrationControls.service++;
      }
    } else if (ud || ad) report.unmigrated++;
    if (!kind) continue;
    report.driftIdentities++;
    report.drift[kind]++;
    const control = driftControl(kind, setBy);
    if (control) create(identity, control);
  }
  return report;
}

function emptyReport(identities: number, skippedExisting: number): SeedReport {
  return {
    identities,
    skippedExisting,
    userDisabled: 0,
    adminDisabled: 0,
    flagged: 0,
    migrated: 0,
    unmigrated: 0,
    migrationControls: { client: 0, service: 0 },
    driftIdentities: 0,
    drift: Object.fromEntries(DRIFT_KINDS.map((k) => [k, 0])) as Record<DriftKind, number>,
    controlsCreated: 0,
    legacyDrift: { on: 0, off: 0 },
  };
}

/** The control one kind of drift adds; none for the kinds that shape the migration instead. */
function driftControl(kind: DriftKind, setBy: SetBySpelling): NewControl | undefined {
  const reason = `sandbox drift: ${kind}`;
  switch (kind) {
    case "client_control_without_flag":
    case "duplicate_client_sell_only":
      return sellOnly(setBy.client, true, reason);
    case "service_control_without_flag":
      return sellOnly(setBy.service, false, reason);
    case "unknown_set_by":
      return sellOnly("SET_BY_PARTNER", false, reason);
    case "extra_closed":
    case "extra_dormant":
      return {
        type: kind === "extra_closed" ? "CLOSED" : "DORMANT",
        set_by: setBy.client,
        is_overridable: true,
        reason_code: kind === "extra_closed" ? "END_USER_REQUEST" : "INACTIVITY",
        reason,
      };
    case "extra_frozen":
      return {
        type: "FROZEN",
        set_by: setBy.service,
        is_overridable: false,
        reason_code: "COMPLIANCE_INVESTIGATION",
        reason,
      };
    default:
      // set_by_other_spelling, client_not_overridable, service_control_missing: shaped the migration.
      return undefined;
  }
}
