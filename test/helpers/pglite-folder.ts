/**
 * A PGlite data folder just initialised (no tool schema: an empty database), made once for every
 * test process of the checkout and PGlite version, never opened itself: tests copy it. Copying it
 * gives a new folder without PGlite's initdb, which took 2–3 s of wall and 3–5 s of CPU each time
 * (in every test process when each made its own); a fresh folder looks the same after its first
 * open. A second folder holds the same database with the tool's migrations applied, named after
 * them, for tests that open their database migrated (migrating a copy took about 0.3 s of CPU).
 * It plays the part the build's template (`dist/pglite/`) plays for the CLI, without needing a
 * current build, and a copy is cheaper than unpacking the tarball.
 *
 * It is kept in `node_modules/.cache/controls-migrate-tests/` (build tools' cache folder, ignored
 * by git and removed by `npm ci`), named after the PGlite version that made it, and built once
 * however many test processes start at the same moment (`build-once.ts`): the suite's first four
 * test files each ran initdb when they built it side by side, 4–5 s of CPU and 700 MB each.
 *
 * @example
 *   await copyInitialisedPgliteFolder(join(dir, "data"));
 */
import { createHash } from "node:crypto";
import { cpSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openPgliteThread } from "../../src/db/connection/connect.ts";
import { migrateToLatest } from "../../src/db/connection/migrate.ts";
import {
  installedPgliteVersion,
  migrationsFingerprint,
} from "../../src/db/connection/pglite-template.ts";
import { silentLogger } from "../../src/log.ts";
import { buildOnce } from "./build-once.ts";

// biome-ignore lint/suspicious/noExplicitAny: a prepared folder's build works on any Kysely
type AnyDb = import("kysely").Kysely<any>;

/**
 * What a test's database holds before its first run, built once and copied after (see
 * {@link copyInitialisedPgliteFolder}'s `prepared`): `build` runs on the empty or migrated
 * database. `key` names everything its content follows from that `build`'s own text does not
 * (counts, seeds, the rows' hash, the fingerprint of the code it calls: {@link codeFingerprint}).
 */
export interface PreparedDatabase {
  readonly key: string;
  readonly build: (db: AnyDb) => Promise<void>;
}

/** Prepared folders unused this long are removed when another is built. */
const PREPARED_KEPT_MS = 3 * 24 * 3600 * 1000;

/** A short hash of the TypeScript sources in `folders` (under the checkout), names and text. */
export function codeFingerprint(...folders: readonly string[]): string {
  const hash = createHash("sha256");
  for (const folder of folders) {
    const dir = join(ROOT, folder);
    for (const name of readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
      if (!name.endsWith(".ts")) continue;
      hash.update(name).update(readFileSync(join(dir, name)));
    }
  }
  return hash.digest("hex").slice(0, 16);
}

const CACHE = fileURLToPath(
  new URL("../../node_modules/.cache/controls-migrate-tests/", import.meta.url),
);

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

let folder: Promise<string> | undefined;
let migratedFolder: Promise<string> | undefined;

/**
 * Makes `dataDir` (missing, or an empty folder) a copy of the cached folder: with `migrated`, of
 * the one holding the tool's schema; with `prepared`, of the one on which its `build` ran too
 * (a source relation seeded, say): copying it cost about 0.05 s of CPU, opening the database to
 * build it again 1.1 s (1.6 s with 12,000 identities seeded).
 */
export async function copyInitialisedPgliteFolder(
  dataDir: string,
  options: { readonly migrated?: boolean; readonly prepared?: PreparedDatabase } = {},
): Promise<void> {
  if (options.prepared) {
    await copyPrepared(dataDir, options.migrated === true, options.prepared);
    return;
  }
  const from = options.migrated ? await migratedPgliteFolder() : await initialisedPgliteFolder();
  cpSync(from, dataDir, { recursive: true });
}

/**
 * Copies the prepared folder; once more, built again, if another process pruned it meanwhile
 * (one unused for days, removed at the moment this one copied it).
 */
async function copyPrepared(dataDir: string, migrated: boolean, prepared: PreparedDatabase) {
  for (let attempt = 1; ; attempt++) {
    const from = await preparedPgliteFolder(migrated, prepared);
    try {
      cpSync(from, dataDir, { recursive: true });
      return;
    } catch (err) {
      if (attempt > 1 || (err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
}

/**
 * The folder of `prepared` built on the empty or migrated database, named after everything its
 * content follows from: the base folder's name, the key, and `build`'s text. Building one prunes
 * the others no test can use again, or unused for three days (`pruneUnused`).
 */
async function preparedPgliteFolder(migrated: boolean, prepared: PreparedDatabase) {
  const base = migrated ? await migratedPgliteFolder() : await initialisedPgliteFolder();
  const baseName = base.split("/").at(-2) ?? "";
  const name = `prepared-${baseName}-${createHash("sha256")
    .update(prepared.key)
    .update(prepared.build.toString())
    .digest("hex")
    .slice(0, 24)}`;
  let built = false;
  const data = await cachedFolder(
    name,
    (dataDir) => {
      built = true;
      cpSync(base, dataDir, { recursive: true });
    },
    false,
    prepared.build,
  );
  const home = join(CACHE, name);
  const now = new Date();
  utimesSync(home, now, now);
  if (built) pruneUnused(name);
  return data;
}

/**
 * Removes the prepared folders no test of this checkout can use again (built on another base:
 * older migrations or PGlite), and the others unused for three days.
 */
function pruneUnused(keep: string): void {
  const empty = `pglite-${installedPgliteVersion()}`;
  const bases = [empty, `${empty}-migrated-${migrationsFingerprint(ROOT)}`];
  const current = (entry: string) =>
    bases.some(
      (b) =>
        entry.startsWith(`prepared-${b}-`) && /^[0-9a-f]{24}$/.test(entry.slice(b.length + 10)),
    );
  for (const entry of readdirSync(CACHE)) {
    if (!entry.startsWith("prepared-") || entry === keep) continue;
    const home = join(CACHE, entry);
    try {
      if (!current(entry) || Date.now() - statSync(home).mtimeMs > PREPARED_KEPT_MS) {
        rmSync(home, { recursive: true, force: true });
      }
    } catch {
      // Another process removed it first.
    }
  }
}

/** The empty database's cached folder, built first when missing. */
function initialisedPgliteFolder(): Promise<string> {
  folder ??= cachedFolder(`pglite-${installedPgliteVersion()}`, async () => {});
  return folder;
}

/** The migrated database's cached folder, named after the migrations' sources (and migrate.ts). */
function migratedPgliteFolder(): Promise<string> {
  migratedFolder ??= (async () => {
    const empty = await initialisedPgliteFolder();
    const name = `pglite-${installedPgliteVersion()}-migrated-${migrationsFingerprint(ROOT)}`;
    return cachedFolder(name, (dataDir) => cpSync(empty, dataDir, { recursive: true }), true);
  })();
  return migratedFolder;
}

/**
 * `CACHE/<name>/data`, made once when missing: `prepare` fills a new data folder (or leaves it to
 * PGlite's initdb), which is then opened (migrated with `migrate`, then given to `build`) and
 * closed.
 */
async function cachedFolder(
  name: string,
  prepare: (dataDir: string) => void | Promise<void>,
  migrate = false,
  build?: (db: AnyDb) => Promise<void>,
): Promise<string> {
  const home = await buildOnce(join(CACHE, name), async (into) => {
    await prepare(join(into, "data"));
    const handle = await openPgliteThread({ dataDir: join(into, "data") });
    try {
      if (migrate) await migrateToLatest(handle.db, silentLogger);
      if (build) await build(handle.db);
    } finally {
      await handle.close();
    }
  });
  return join(home, "data");
}
