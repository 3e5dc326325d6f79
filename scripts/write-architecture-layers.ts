/**
 * `npm run docs:layers`: writes ARCHITECTURE.md's "Folders" table from the layer table
 * (`test/layers.ts`), between its markers. `test/unit/repo.import-rules.test.ts` fails when the
 * two differ.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderLayersTable, TABLE_END, TABLE_START } from "../test/layers.ts";

const file = fileURLToPath(new URL("../ARCHITECTURE.md", import.meta.url));
const doc = readFileSync(file, "utf8");
const start = doc.indexOf(TABLE_START);
const end = doc.indexOf(TABLE_END);
if (start < 0 || end < start) {
  throw new Error(`ARCHITECTURE.md lacks the markers ${TABLE_START} … ${TABLE_END}`);
}
const next = `${doc.slice(0, start + TABLE_START.length)}\n${renderLayersTable()}\n${doc.slice(end)}`;
if (next !== doc) writeFileSync(file, next);
process.stdout.write(next === doc ? "ARCHITECTURE.md is current\n" : "ARCHITECTURE.md updated\n");
