/**
 * Which npm packages a CLI child loads: a module hook (node's `module.register`), started through
 * `NODE_OPTIONS`, appends the name of each ES module's package to a file as it is loaded. For the
 * start-up tests: `--help` loads no zod, `status` on PostgreSQL no kysely. The hook's files and
 * the record live in a temporary folder that `close()` removes.
 *
 * @example
 *   const trace = packageTrace();
 *   await runCli(["--help"], trace.env);
 *   trace.packages(); // Set { "yargs", "cliui", ... }
 *   trace.close();
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const HOOK = `import { appendFileSync } from "node:fs";
let file;
export function initialize(data) { file = data.file; }
export async function load(url, context, next) {
  const m = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url);
  if (m) appendFileSync(file, m[1] + "\\n");
  return next(url, context);
}
`;

export interface PackageTrace {
  /** The env to give the child: its NODE_OPTIONS import the hook. */
  readonly env: Record<string, string>;
  /** The packages loaded so far by the children started with `env`. */
  packages(): Set<string>;
  close(): void;
}

export function packageTrace(): PackageTrace {
  const dir = mkdtempSync(join(tmpdir(), "cm-package-trace-"));
  const file = join(dir, "loaded.txt");
  writeFileSync(file, "");
  writeFileSync(join(dir, "hook.mjs"), HOOK);
  const hookUrl = pathToFileURL(join(dir, "hook.mjs")).href;
  writeFileSync(
    join(dir, "register.mjs"),
    `import { register } from "node:module";\nregister(${JSON.stringify(hookUrl)}, { data: { file: ${JSON.stringify(file)} } });\n`,
  );
  return {
    env: { NODE_OPTIONS: `--import ${pathToFileURL(join(dir, "register.mjs")).href}` },
    packages: () => new Set(readFileSync(file, "utf8").split("\n").filter(Boolean)),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
