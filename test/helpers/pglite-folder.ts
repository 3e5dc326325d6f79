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
import { cpSync } from "node:fs";
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

const CACHE = fileURLToPath(
  new URL("../../node_modules/.cache/controls-migrate-tests/", import.meta.url),
);

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

let folder: Promise<string> | undefined;
let migratedFolder: Promise<string> | undefined;

/**
 * Makes `dataDir` (missing, or an empty folder) a copy of the cached folder: with `migrated`, of
 * the one holding the tool's schema.
 */
export async function copyInitialisedPgliteFolder(
  dataDir: string,
  options: { readonly migrated?: boolean } = {},
): Promise<void> {
  const from = options.migrated ? await migratedPgliteFolder() : await initialisedPgliteFolder();
  cpSync(from, dataDir, { recursive: true });
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
 * PGlite's initdb), which is then opened (and migrated with `migrate`) and closed.
 */
async function cachedFolder(
  name: string,
  prepare: (dataDir: string) => void | Promise<void>,
  migrate = false,
): Promise<string> {
  const home = await buildOnce(join(CACHE, name), async (into) => {
    await prepare(join(into, "data"));
    const handle = await openPgliteThread({ dataDir: join(into, "data") });
    try {
      if (migrate) await migrateToLatest(handle.db, silentLogger);
    } finally {
      await handle.close();
    }
  });
  return join(home, "data");
}
