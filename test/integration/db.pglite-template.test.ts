/**
 * A fresh PGlite data folder starts from the pre-initialised template the build makes
 * (`npm run build` writes dist/pglite/), not from initdb.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { sql } from "kysely";
import { MIGRATION_NAMES } from "../../migrations/names.ts";
import { loadGlobalConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/connection/connect.ts";
import { ensureSchema } from "../../src/db/connection/migrate.ts";
import {
  extractTar,
  findTemplate,
  installedPgliteVersion,
  seedFromTemplate,
  TEMPLATE_DIR,
} from "../../src/db/connection/pglite-template.ts";
import { silentLogger } from "../../src/log.ts";
import { REPO_ROOT } from "../helpers/cli.ts";

/** One ustar entry: a 512-byte header (name, size, type) and the padded body. */
function tarEntry(name: string, body: string, type = "0"): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, "utf8");
  header.write(`${Buffer.byteLength(body).toString(8).padStart(11, "0")}\0`, 124, "utf8");
  header.write(type, 156, "utf8");
  const data = Buffer.alloc(Math.ceil(Buffer.byteLength(body) / 512) * 512);
  data.write(body, 0, "utf8");
  return Buffer.concat([header, data]);
}

describe("the pre-initialised PGlite data folder", () => {
  let tmp: string;
  let skip: string | undefined;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), "cm-template-"));
    const found = findTemplate(REPO_ROOT);
    if ("reason" in found) skip = `${found.reason}: run npm run build first`;
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("seeds a fresh --data-dir, which then opens as a working database", async (t) => {
    if (skip) return t.skip(skip);
    const dir = join(tmp, "fresh");
    mkdirSync(dir);
    assert.equal(seedFromTemplate(dir, REPO_ROOT), "seeded");
    assert.ok(existsSync(join(dir, "PG_VERSION")));
    const global = loadGlobalConfig({ "data-dir": dir }, {});
    const handle = await openDatabase(global, silentLogger);
    try {
      const r = await sql<{ n: number }>`select 6 * 7 as n`.execute(handle.db);
      assert.equal(r.rows[0]?.n, 42);
    } finally {
      await handle.close();
    }
  });

  it("holds the tool's schema: a seeded folder's first open applies no migration", async (t) => {
    if (skip) return t.skip(skip);
    const found = findTemplate(REPO_ROOT);
    assert.ok("file" in found && found.current, "the build's template holds every migration");
    const dir = join(tmp, "schema");
    mkdirSync(dir);
    assert.equal(seedFromTemplate(dir, REPO_ROOT), "seeded");
    const handle = await openDatabase(loadGlobalConfig({ "data-dir": dir }, {}), silentLogger);
    try {
      const { applied, known } = await ensureSchema(handle.db, silentLogger);
      assert.deepEqual(applied, []);
      assert.equal(known, MIGRATION_NAMES.length);
    } finally {
      await handle.close();
    }
  });

  it("leaves a folder that already holds a database alone", (t) => {
    if (skip) return t.skip(skip);
    const dir = join(tmp, "existing");
    mkdirSync(dir);
    writeFileSync(join(dir, "PG_VERSION"), "17\n");
    assert.equal(seedFromTemplate(dir, REPO_ROOT), "existing database");
  });

  it("is not used when another PGlite version made it, and says which", () => {
    const root = join(tmp, "other-version");
    mkdirSync(join(root, TEMPLATE_DIR), { recursive: true });
    writeFileSync(join(root, TEMPLATE_DIR, "template.tar.gz"), gzipSync(Buffer.alloc(1024)));
    writeFileSync(join(root, TEMPLATE_DIR, "template.json"), '{"pglite":"0.0.1"}');
    const dir = join(tmp, "fresh-other");
    mkdirSync(dir);
    const outcome = seedFromTemplate(dir, root);
    assert.equal(
      outcome,
      `initdb: the template was made by PGlite 0.0.1, not ${installedPgliteVersion()}`,
    );
    assert.ok(!existsSync(join(dir, "PG_VERSION")));
  });

  it("writes PG_VERSION last and refuses an entry that leaves the folder", () => {
    const dir = join(tmp, "tar");
    const tar = Buffer.concat([
      tarEntry("/PG_VERSION", "17\n"),
      tarEntry("/base", "", "5"),
      tarEntry("/base/1", "page"),
      Buffer.alloc(1024),
    ]);
    extractTar(tar, dir);
    assert.ok(existsSync(join(dir, "base", "1")) && existsSync(join(dir, "PG_VERSION")));
    const evil = Buffer.concat([tarEntry("../outside", "x"), Buffer.alloc(1024)]);
    assert.throws(() => extractTar(evil, join(tmp, "evil")), /leaves the data folder/);
    assert.ok(!existsSync(join(tmp, "outside")));
  });
});
