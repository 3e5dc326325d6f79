/**
 * Rewrites README.md's options tables from the options table (`npm run docs:options`).
 * test/unit/config.readme-options.test.ts fails while the README is out of date.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { replaceReadmeOptions } from "../src/config/readme-table.ts";

const readme = fileURLToPath(new URL("../README.md", import.meta.url));
writeFileSync(readme, replaceReadmeOptions(readFileSync(readme, "utf8")));
process.stdout.write("README.md options tables rewritten from src/config/.\n");
