/**
 * Legacy drift (issue 27): the platform's own `user_disabled` / `admin_disabled` of a fraction of
 * the identities differ from the seeded source flags, half turned on and half turned off, so a
 * rehearsal meets every cell of the three-way table. Deterministic for a given seed and batch.
 */
import { prng } from "../shared.ts";
import type { StoredIdentity } from "./identity-store.ts";

/** What a drift did: identities whose field was turned on, and turned off. */
export interface LegacyDriftReport {
  on: number;
  off: number;
}

type Field = "user_disabled" | "admin_disabled";
const FIELDS: readonly Field[] = ["user_disabled", "admin_disabled"];

/**
 * Changes the platform's legacy fields of `round(fraction × batch)` identities of a batch: half
 * (rounded down) get a true field turned off, the rest a false field turned on; the field is drawn
 * among those that can change. An identity is changed once.
 *
 * @example
 *   applyLegacyDrift(added, 0.2, 1) // { on: 100, off: 100 } for 1000 identities
 */
export function applyLegacyDrift(
  batch: readonly StoredIdentity[],
  fraction: number,
  seed: number,
): LegacyDriftReport {
  const report = { on: 0, off: 0 };
  if (fraction <= 0 || batch.length === 0) return report;
  const rand = prng(seed ^ 0x5bd1e995);
  const order = shuffled(batch.length, rand);
  const target = Math.round(fraction * batch.length);
  const wantOff = Math.floor(target / 2);
  const picked = new Uint8Array(batch.length);
  // Turned off first: only flagged identities qualify, the scarcer kind.
  for (const i of order) {
    if (report.off >= wantOff) break;
    const identity = batch[i] as StoredIdentity;
    const set = FIELDS.filter((f) => identity[f]);
    if (set.length === 0) continue;
    flip(identity, set[Math.floor(rand() * set.length)] as Field, false);
    picked[i] = 1;
    report.off++;
  }
  for (const i of order) {
    if (report.on >= target - report.off) break;
    if (picked[i]) continue;
    const identity = batch[i] as StoredIdentity;
    const clear = FIELDS.filter((f) => !identity[f]);
    if (clear.length === 0) continue;
    flip(identity, clear[Math.floor(rand() * clear.length)] as Field, true);
    report.on++;
  }
  return report;
}

function flip(identity: StoredIdentity, field: Field, value: boolean): void {
  (identity as { -readonly [K in Field]: boolean })[field] = value;
}

/** A Fisher–Yates permutation of 0..n-1. */
function shuffled(n: number, rand: () => number): Int32Array {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const t = a[i] as number;
    a[i] = a[j] as number;
    a[j] = t;
  }
  return a;
}
