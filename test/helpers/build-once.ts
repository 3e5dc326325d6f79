/**
 * A folder built once however many test processes ask for it at the same moment: one builds it,
 * holding `<home>.lock` (a folder, made atomically, with the builder's pid in it), into a folder of
 * its own that it renames into place, so a reader sees a whole folder or none; the others wait
 * until it has landed. A lock whose process is gone is taken over.
 *
 * @example
 *   const home = await buildOnce(join(CACHE, "pglite-0.4.6"), async (into) => initdb(into));
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** `home`, made by `build` (given an empty folder beside it) when missing; resolves once it exists. */
export async function buildOnce(
  home: string,
  build: (into: string) => void | Promise<void>,
): Promise<string> {
  const lock = `${home}.lock`;
  for (;;) {
    if (existsSync(home)) return home;
    mkdirSync(dirname(home), { recursive: true });
    if (takeLock(lock)) {
      try {
        if (!existsSync(home)) await buildInto(home, build);
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
      return home;
    }
    await sleep(50);
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

/** Takes `lock`, or clears it when its process is gone; false while another process holds it. */
function takeLock(lock: string): boolean {
  try {
    mkdirSync(lock);
  } catch {
    const holder = Number.parseInt(readText(join(lock, "pid")), 10);
    // A lock just made has no pid yet; one still without it after 10 s lost its maker.
    if (Number.isNaN(holder) ? ageMs(lock) < 10_000 : processAlive(holder)) return false;
    rmSync(lock, { recursive: true, force: true });
    return false;
  }
  writeFileSync(join(lock, "pid"), String(process.pid));
  return true;
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
