/**
 * A fresh PGlite data folder starts from a pre-initialised one instead of running initdb (5–10 s
 * and about 860 MB of peak memory on first open). `npm run build` (and so `npm pack`) dumps a
 * just-initialised database with PGlite's `dumpDataDir` into `dist/pglite/template.tar.gz`, next
 * to the PGlite version that made it (`scripts/build-pglite-template.ts`). Opening a folder with
 * no `PG_VERSION` unpacks that tarball into it first; PGlite then opens it as an existing
 * database. PGlite's own `loadDataDir` does the same inside its WebAssembly file system, slower
 * (4 s, 360 MB measured) than writing the files here (about 0.2 s).
 *
 * The template also holds the tool's schema, its migrations applied at build time (0.9 s of every
 * fresh folder's first open, measured in the demo); a build whose migrations differ makes it again.
 *
 * A template made by another PGlite version is not used (its catalog may differ), nor one holding a
 * migration this code does not know: the folder is then initialised by PGlite as before.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve, sep } from "node:path";
import { gunzipSync } from "node:zlib";
import { MIGRATION_NAMES } from "../../../migrations/names.ts";
import { packageRoot } from "../../version.ts";

/** Where the build writes the template, relative to the package root. */
export const TEMPLATE_DIR = join("dist", "pglite");
const TARBALL = "template.tar.gz";
const META = "template.json";

export interface TemplateMeta {
  /** The PGlite version that initialised the template. */
  readonly pglite: string;
  /** The tool's migrations applied in it (none in a template of an earlier build). */
  readonly migrations?: readonly string[];
}

/** The installed PGlite's version, from its package.json. */
export function installedPgliteVersion(): string {
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve("@electric-sql/pglite"));
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "@electric-sql/pglite" && pkg.version) return pkg.version;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error("@electric-sql/pglite: no package.json found");
    dir = up;
  }
}

/** The template tarball usable with the installed PGlite, or why there is none. */
export function findTemplate(
  root: string = packageRoot(),
): { file: string; current: boolean } | { reason: string } {
  const dir = join(root, TEMPLATE_DIR);
  const file = join(dir, TARBALL);
  if (!existsSync(file)) return { reason: `no ${join(TEMPLATE_DIR, TARBALL)} (npm run build)` };
  let meta: TemplateMeta;
  try {
    meta = JSON.parse(readFileSync(join(dir, META), "utf8")) as TemplateMeta;
  } catch {
    return { reason: `no readable ${join(TEMPLATE_DIR, META)}` };
  }
  const installed = installedPgliteVersion();
  if (meta.pglite !== installed) {
    return { reason: `the template was made by PGlite ${meta.pglite}, not ${installed}` };
  }
  const unknown = (meta.migrations ?? []).find((m) => !MIGRATION_NAMES.includes(m));
  if (unknown) return { reason: `the template holds migration ${unknown}, unknown to this code` };
  // Current: made with every migration of this code (an older one is still used, and the
  // first open applies the rest).
  return { file, current: (meta.migrations ?? []).join() === MIGRATION_NAMES.join() };
}

/**
 * What a database migrated by this checkout depends on: a hash of the migrations' sources and of
 * their migrator, read from a checkout's `migrations/*.ts` and `src/db/connection/migrate.ts`.
 * Names the build's cached templates and the suite's cached migrated folder (build and tests
 * only: an installed package ships neither source).
 */
export function migrationsFingerprint(root: string): string {
  const hash = createHash("sha256").update(
    readFileSync(join(root, "src/db/connection/migrate.ts")),
  );
  const folder = join(root, "migrations");
  for (const name of readdirSync(folder)
    .filter((f) => f.endsWith(".ts"))
    .sort()) {
    hash.update(name).update(readFileSync(join(folder, name)));
  }
  return hash.digest("hex").slice(0, 16);
}

/**
 * Writes the template tarball and its meta file into `root`/dist/pglite: `pglite`'s version, and
 * this code's migrations, which the tarball's database must hold.
 */
export function writeTemplate(root: string, tarGz: Uint8Array, pglite: string): string {
  const dir = join(root, TEMPLATE_DIR);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, TARBALL), tarGz);
  const meta: TemplateMeta = { pglite, migrations: MIGRATION_NAMES };
  writeFileSync(join(dir, META), `${JSON.stringify(meta)}\n`);
  return join(dir, TARBALL);
}

/** True when `dir` holds no PostgreSQL data folder yet (missing, empty, or no PG_VERSION). */
export function isFreshDataDir(dir: string): boolean {
  return !existsSync(join(dir, "PG_VERSION"));
}

/**
 * Unpacks the template into `dir` when it holds no database yet. Returns what happened, for the
 * debug log: `seeded`, or why PGlite's initdb will run instead.
 */
export function seedFromTemplate(dir: string, root: string = packageRoot()): string {
  if (!isFreshDataDir(dir)) return "existing database";
  const found = findTemplate(root);
  if ("reason" in found) return `initdb: ${found.reason}`;
  // A seed cut short left no PG_VERSION (written last): it is simply written again.
  extractTar(gunzipSync(readFileSync(found.file)), dir);
  return "seeded";
}

/**
 * Extracts a POSIX (ustar) tarball as PGlite's `dumpDataDir` writes it: directories and regular
 * files, names relative to the data folder (a leading `/` stripped). Anything else, or a name
 * leaving `dest`, is refused: the tarball is ours, so a surprise is a broken build. The top-level
 * `PG_VERSION`, which tells PGlite a database exists, is written last, so an extraction cut short
 * is never taken for a database.
 */
export function extractTar(tar: Uint8Array, dest: string): void {
  const root = resolve(dest);
  const text = (from: number, len: number) => {
    const bytes = tar.subarray(from, from + len);
    const end = bytes.indexOf(0);
    return Buffer.from(end === -1 ? bytes : bytes.subarray(0, end)).toString("utf8");
  };
  let last: { target: string; data: Uint8Array } | undefined;
  let at = 0;
  while (at + 512 <= tar.length) {
    const name = text(at, 100);
    if (name === "") break; // two zero blocks end the archive
    const prefix = text(at + 345, 155);
    const size = Number.parseInt(text(at + 124, 12).trim() || "0", 8);
    const type = text(at + 156, 1) || "0";
    const rel = (prefix ? `${prefix}/${name}` : name).replace(/^\/+/, "");
    const target = resolve(root, rel);
    if (target !== root && !target.startsWith(root + sep)) {
      throw new Error(`PGlite template: entry ${rel} leaves the data folder`);
    }
    const body = at + 512;
    if (type === "5") mkdirSync(target, { recursive: true });
    else if (type === "0") {
      const data = tar.subarray(body, body + size);
      if (rel === "PG_VERSION") last = { target, data };
      else {
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, data);
      }
    } else throw new Error(`PGlite template: entry ${rel} of type ${type} is not supported`);
    at = body + Math.ceil(size / 512) * 512;
  }
  if (!last) throw new Error("PGlite template: no PG_VERSION in the tarball");
  writeFileSync(last.target, last.data);
}
