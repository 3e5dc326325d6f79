/**
 * A folder built once however many test processes ask for it at the same moment: one builds it,
 * holding `<home>.lock` (the embedded database's own data-folder lock, `data-dir-lock.ts`, whose
 * holder is judged gone when its process is, or when it stops touching the file), into a folder of
 * its own that it renames into place, so a reader sees a whole folder or none. The others wait
 * until it has landed.
 *
 * @example
 *   const home = await buildOnce(join(CACHE, "pglite-0.4.6"), async (into) => initdb(into));
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { acquireDataDirLock, type DataDirLock } from "../../src/db/connection/data-dir-lock.ts";
import { UserError } from "../../src/errors.ts";

/** `home`, made by `build` (given an empty folder beside it) when missing; resolves once it exists. */
export async function buildOnce(
  home: string,
  build: (into: string) => void | Promise<void>,
): Promise<string> {
  for (;;) {
    if (existsSync(home)) return home;
    mkdirSync(dirname(home), { recursive: true });
    let lock: DataDirLock;
    try {
      lock = acquireDataDirLock(home);
    } catch (err) {
      // Another process holds it: it is building.
      if (!(err instanceof UserError)) throw err;
      await sleep(50);
      continue;
    }
    try {
      if (!existsSync(home)) await buildInto(home, build);
    } finally {
      lock.release();
    }
    return home;
  }
}

async function buildInto(home: string, build: (into: string) => void | Promise<void>) {
  const building = mkdtempSync(join(dirname(home), "building-"));
  try {
    await build(building);
    renameSync(building, home);
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}
