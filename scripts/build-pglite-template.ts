/**
 * Builds the pre-initialised PGlite data folder every fresh `--data-dir` starts from
 * (`src/db/connection/pglite-template.ts`): initdb runs once here, at build time, never on a
 * user's machine, and the tool's migrations are applied on top, by the same migrator as a run.
 * Run by `npm run build` (so by `npm pack`'s prepack) and by `npm run demo` when missing.
 *
 *   node --import tsx scripts/build-pglite-template.ts [--if-missing]
 *
 * --if-missing keeps a template that this PGlite made with every migration of this code.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { openPgliteThread } from "../src/db/connection/connect.ts";
import { ensureSchema } from "../src/db/connection/migrate.ts";
import {
  findTemplate,
  installedPgliteVersion,
  writeTemplate,
} from "../src/db/connection/pglite-template.ts";
import { silentLogger } from "../src/log.ts";
import { packageRoot } from "../src/version.ts";

const root = packageRoot();
const found = findTemplate(root);
if (process.argv.includes("--if-missing") && "file" in found && found.current) process.exit(0);
const started = performance.now();
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
  const file = writeTemplate(
    root,
    new Uint8Array(await dump.arrayBuffer()),
    installedPgliteVersion(),
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(`PGlite template written (${dump.size} bytes, ${seconds} s): ${file}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
