/**
 * Deterministic synthetic identities, shared by `db seed` and the sandbox so that a source table
 * and a sandbox seeded with the same N and seed describe the same identities.
 *
 * Mix (per identity, independent draws): 0.5% both flags, 9.5% user_disabled only, 1.5%
 * admin_disabled only, the rest clean. So about 10% user_disabled and 2% admin_disabled in all.
 */

export interface SyntheticIdentity {
  readonly id: string;
  readonly user_disabled: boolean;
  readonly admin_disabled: boolean;
}

/** mulberry32: a tiny, fast, well-distributed 32-bit PRNG. Returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hex8 = (n: number) => (n >>> 0).toString(16).padStart(8, "0");

/** A version-4-shaped UUID drawn from `rand`. */
export function uuidFrom(rand: () => number): string {
  const a = hex8(rand() * 4294967296);
  const b = hex8(rand() * 4294967296);
  const c = hex8(rand() * 4294967296);
  const d = hex8(rand() * 4294967296);
  const variant = ((Number.parseInt(c[0] ?? "0", 16) & 0x3) | 0x8).toString(16);
  return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${variant}${c.slice(1, 4)}-${c.slice(4)}${d}`;
}

export function flagsFrom(r: number): { user_disabled: boolean; admin_disabled: boolean } {
  if (r < 0.005) return { user_disabled: true, admin_disabled: true };
  if (r < 0.1) return { user_disabled: true, admin_disabled: false };
  if (r < 0.115) return { user_disabled: false, admin_disabled: true };
  return { user_disabled: false, admin_disabled: false };
}

/**
 * Yields `count` identities, identical for the same (count, seed) on every machine.
 *
 * @example
 *   for (const row of syntheticIdentities(3, 7)) console.log(row.id, row.user_disabled);
 */
export function* syntheticIdentities(count: number, seed = 1): Generator<SyntheticIdentity> {
  const rand = prng(seed);
  for (let i = 0; i < count; i++) {
    const id = uuidFrom(rand);
    yield { id, ...flagsFrom(rand()) };
  }
}
