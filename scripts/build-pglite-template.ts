/**
 * Builds the pre-initialised PGlite data folder every fresh `--data-dir` starts from
 * (`src/db/connection/pglite-template.ts`): initdb runs once here, at build time, never on a
 * user's machine.
 * Run by `npm run build` (so by `npm pack`'s prepack) and by `npm run demo` when missing.
 *
 *   node --import tsx scripts/build-pglite-template.ts [--if-missing]
 */
import { PGlite } from "@electric-sql/pglite";
import {
  findTemplate,
  installedPgliteVersion,
  writeTemplate,
} from "../src/db/connection/pglite-template.ts";
import { packageRoot } from "../src/version.ts";

const root = packageRoot();
if (process.argv.includes("--if-missing") && "file" in findTemplate(root)) process.exit(0);
const started = performance.now();
const pglite = new PGlite();
await pglite.waitReady;
const dump = await pglite.dumpDataDir("gzip");
await pglite.close();
const file = writeTemplate(root, new Uint8Array(await dump.arrayBuffer()), {
  pglite: installedPgliteVersion(),
});
const seconds = ((performance.now() - started) / 1000).toFixed(1);
process.stderr.write(`PGlite template written (${dump.size} bytes, ${seconds} s): ${file}\n`);
