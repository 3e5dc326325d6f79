/**
 * Rewrites the "commands" column of README's exit-code table from `src/commands/exit-codes.ts`
 * (`npm run docs:exit-codes`). test/unit/commands.exit-codes.test.ts fails while it is out of date.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { withExitCodeColumn } from "../src/commands/exit-codes-readme.ts";

const readme = fileURLToPath(new URL("../README.md", import.meta.url));
writeFileSync(readme, withExitCodeColumn(readFileSync(readme, "utf8")));
process.stdout.write("README.md's exit-code table rewritten from src/commands/exit-codes.ts.\n");
