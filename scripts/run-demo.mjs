/**
 * `npm run demo`: in the folder npm was called from (`INIT_CWD`), where its `.data/demo-*` folder
 * and `reports/` land. It runs the demo bundled by `npm run build` (`dist/demo.mjs`,
 * `scripts/build-bundle.ts`) when the build is as new as every source it holds; otherwise the
 * sources (node strips their types), after making the PGlite template if it is missing, as before
 * any build. Plain JavaScript, so that choosing loads no TypeScript.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const BUNDLE = join(ROOT, "dist/demo.mjs");
/** What the bundle holds, and what it runs beside it (PGlite's thread, the template). */
const SOURCES = ["src", "migrations", "packages/sandbox/src", "scripts/demo.ts"];
const BESIDE = ["dist/src/db/connection/pglite-worker.js", "dist/pglite/template.tar.gz"];

/**
 * The newest modification time of the TypeScript sources under `path` (a file or a folder), in
 * ms.
 */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return path.endsWith(".ts") ? stat.mtimeMs : 0;
  let latest = 0;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

function bundleIsCurrent() {
  if (!existsSync(BUNDLE) || BESIDE.some((f) => !existsSync(join(ROOT, f)))) return false;
  const built = statSync(BUNDLE).mtimeMs;
  return SOURCES.every((s) => newest(join(ROOT, s)) <= built);
}

if (process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);
if (bundleIsCurrent()) {
  await import(pathToFileURL(BUNDLE).href);
} else {
  process.stderr.write("The demo runs from its sources (npm run build makes it start faster).\n");
  for (const [script, args] of [
    ["scripts/build-pglite-template.ts", ["--if-missing"]],
    ["scripts/demo.ts", process.argv.slice(2)],
  ]) {
    const run = spawnSync(process.execPath, [join(ROOT, script), ...args], {
      stdio: "inherit",
    });
    if (run.status !== 0) {
      process.exitCode = run.status ?? 1;
      break;
    }
  }
}
