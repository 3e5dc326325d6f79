/**
 * A PGlite data folder just initialised (no tool schema: an empty database), made once per process
 * and removed at its exit. Copying it gives a new folder without PGlite's initdb, which took 5–7 s
 * each time; a fresh folder looks the same after its first open.
 *
 * @example
 *   cpSync(await initialisedPgliteFolder(), join(dir, "data"), { recursive: true });
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPgliteThread } from "../../src/db/connection/connect.ts";

let folder: Promise<string> | undefined;

export function initialisedPgliteFolder(): Promise<string> {
  folder ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "cm-pglite-template-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const dataDir = join(dir, "data");
    const handle = await openPgliteThread({ dataDir });
    await handle.close();
    return dataDir;
  })();
  return folder;
}
