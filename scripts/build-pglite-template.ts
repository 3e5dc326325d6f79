/**
 * Builds the pre-initialised PGlite data folder every fresh `--data-dir` starts from
 * (`src/db/connection/pglite-template.ts`): initdb runs once here, at build time, never on a
 * user's machine, and the tool's migrations are applied on top, by the same migrator as a run.
 * Run by `npm run build` (so by `npm pack`'s prepack) and by `npm run demo` when missing.
 *
 *   node --import tsx scripts/build-pglite-template.ts [--if-missing]
 *
 * --if-missing keeps a template that this PGlite made with every migration of this code.
 *
 * Each template made is also kept in `node_modules/.cache/controls-migrate-build/`, named after
 * the PGlite version and a hash of the migrations' sources and their migrator; a build in a
 * checkout that shares these node_modules (the package test's fresh checkout, a worktree) copies
 * it instead of running initdb again (about 6 s of CPU). `npm ci` empties that cache.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  findTemplate,
  installedPgliteVersion,
  migrationsFingerprint,
  writeTemplate,
} from "../src/db/connection/pglite-template.ts";
import { packageRoot } from "../src/version.ts";

const root = packageRoot();
const found = findTemplate(root);
if (process.argv.includes("--if-missing") && "file" in found && found.current) process.exit(0);
const started = performance.now();
const cached = cachedTemplatePath();
if (existsSync(cached)) {
  const file = writeTemplate(root, readFileSync(cached), installedPgliteVersion());
  process.stderr.write(`PGlite template copied from the build cache: ${file}\n`);
  process.exit(0);
}
// Loaded only to make one: a template found current, or in the cache, needs none of them.
const { PGlite } = await import("@electric-sql/pglite");
const { openPgliteThread } = await import("../src/db/connection/connect.ts");
const { ensureSchema } = await import("../src/db/connection/migrate.ts");
const { silentLogger } = await import("../src/log.ts");
const dir = mkdtempSync(join(tmpdir(), "cm-pglite-template-"));
try {
  // initdb, then the schema, in a folder; then PGlite dumps that folder as a tarball.
  const dataDir = join(dir, "data");
  const handle = await openPgliteThread({ dataDir });
  try {
    await ensureSchema(handle.db, silentLogger);
  } finally {
    await handle.close();
  }
  const pglite = new PGlite(dataDir);
  await pglite.waitReady;
  const dump = await pglite.dumpDataDir("gzip");
  await pglite.close();
  const tarGz = new Uint8Array(await dump.arrayBuffer());
  const file = writeTemplate(root, tarGz, installedPgliteVersion());
  keepInCache(cached, tarGz);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(`PGlite template written (${dump.size} bytes, ${seconds} s): ${file}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** The cache's name for the template this PGlite and these migrations make. */
function cachedTemplatePath(): string {
  const name = `pglite-template-${installedPgliteVersion()}-${migrationsFingerprint(root)}.tar.gz`;
  return join(root, "node_modules/.cache/controls-migrate-build", name);
}

/** Writes the template into the cache under a temporary name renamed into place. */
function keepInCache(path: string, tarGz: Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, tarGz);
  renameSync(partial, path);
}
