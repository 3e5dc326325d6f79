/**
 * Rewrites docs/options.md's tables from the options table (`npm run docs:options`).
 * test/unit/config.readme-options.test.ts fails while docs/options.md is out of date.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { replaceReadmeOptions } from "../src/config/readme-table.ts";

const readme = fileURLToPath(new URL("../docs/options.md", import.meta.url));
writeFileSync(readme, replaceReadmeOptions(readFileSync(readme, "utf8")));
process.stdout.write("docs/options.md rewritten from src/config/.\n");
