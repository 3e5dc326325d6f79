/**
 * The V8 flags this process changes after start-up, in one place, with V8's defaults for them.
 *
 * V8 stamps a code cache with a hash of the flags in force when the cache is made, and rejects a
 * cache whose stamp differs from its own. The installed command (`bin.ts`) writes the bundle's
 * cache at exit, after a command that opened a database has changed some of these flags: a cache
 * made then carried the changed flags' stamp, every later start (with node's defaults) rejected it
 * and wrote it again, and the command compiled its whole bundle at every start from then on. So
 * the flags are set through here, and `restoreV8FlagDefaults()` puts them back before the cache
 * is made. V8 hashes only the flags that differ from their defaults, so the stamp is then the one a
 * fresh start has.
 */
import { setFlagsFromString } from "node:v8";

/**
 * Each flag set after start-up, and V8's default for it as `node --v8-options` prints it
 * (`repo.v8-flags` checks them against the node that runs the tests).
 */
export const V8_FLAG_DEFAULTS = {
  "heap-growing-percent": "--heap-growing-percent=0",
  "wasm-dynamic-tiering": "--wasm-dynamic-tiering",
  "wasm-tier-up": "--wasm-tier-up",
} as const;

/** A flag this process may change after start-up. */
export type RuntimeV8Flag = keyof typeof V8_FLAG_DEFAULTS;

/**
 * Sets one V8 flag for the whole process (every thread): `setV8Flag("wasm-tier-up", false)`,
 * `setV8Flag("heap-growing-percent", 50)`.
 */
export function setV8Flag(name: RuntimeV8Flag, value: boolean | number): void {
  if (typeof value === "number") setFlagsFromString(`--${name}=${value}`);
  else setFlagsFromString(value ? `--${name}` : `--no-${name}`);
}

/** Sets every flag of the table back to V8's default: a code cache made next matches a fresh start. */
export function restoreV8FlagDefaults(): void {
  for (const flag of Object.values(V8_FLAG_DEFAULTS)) setFlagsFromString(flag);
}
