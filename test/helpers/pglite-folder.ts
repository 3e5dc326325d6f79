/**
 * A PGlite data folder just initialised (no tool schema: an empty database), made once for every
 * test process of the checkout and PGlite version, never opened itself: tests copy it. Copying it
 * gives a new folder without PGlite's initdb, which took 2–3 s of wall and 3–5 s of CPU each time
 * (in every test process when each made its own); a fresh folder looks the same after its first
 * open.
 *
 * It is kept in `node_modules/.cache/controls-migrate-tests/` (build tools' cache folder, ignored
 * by git and removed by `npm ci`), named after the PGlite version that made it. A process builds
 * it in a folder of its own and renames that into place: a reader sees a whole folder or none, and
 * two processes that build it at once both use the one that landed first.
 *
 * @example
 *   await copyInitialisedPgliteFolder(join(dir, "data"));
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openPgliteThread } from "../../src/db/connection/connect.ts";
import { installedPgliteVersion } from "../../src/db/connection/pglite-template.ts";

const CACHE = fileURLToPath(
  new URL("../../node_modules/.cache/controls-migrate-tests/", import.meta.url),
);

let folder: Promise<string> | undefined;

/** Makes `dataDir` (missing, or an empty folder) a copy of the cached folder. */
export async function copyInitialisedPgliteFolder(dataDir: string): Promise<void> {
  cpSync(await initialisedPgliteFolder(), dataDir, { recursive: true });
}

/** The cached folder's path, built first when missing. */
function initialisedPgliteFolder(): Promise<string> {
  folder ??= (async () => {
    const home = join(CACHE, `pglite-${installedPgliteVersion()}`);
    const dataDir = join(home, "data");
    if (existsSync(join(dataDir, "PG_VERSION"))) return dataDir;
    mkdirSync(CACHE, { recursive: true });
    const building = mkdtempSync(join(CACHE, "building-"));
    try {
      const handle = await openPgliteThread({ dataDir: join(building, "data") });
      await handle.close();
      try {
        renameSync(building, home);
      } catch (err) {
        // Another process landed its folder first: use that one.
        if (!existsSync(join(dataDir, "PG_VERSION"))) throw err;
      }
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
    return dataDir;
  })();
  return folder;
}
