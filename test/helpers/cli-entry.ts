/**
 * How tests start the CLI in a child process: the installed command as it ships (`dist/src/bin.js`,
 * which runs the bundle `dist/cli.cjs` with its code cache) when it was built from the sources as
 * they are now (`npm test` builds first), else the sources themselves (`src/cli.ts`, node strips
 * their types). Either way a child runs the code as it is: a stale build is never used.
 *
 * @example
 *   spawn(process.execPath, [...CLI_ENTRY, "plan", "--json"], { cwd: scratchCwd() });
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

/** True when every source file has a compiled file, and the bundle, at least as new as itself. */
function builtFromCurrentSources(): boolean {
  if (process.env.CONTROLS_TEST_FROM_SOURCES === "1") return false;
  const bundle = join(ROOT, "dist/cli.cjs");
  if (!existsSync(bundle)) return false;
  const bundled = statSync(bundle).mtimeMs;
  for (const folder of ["src", "migrations"]) {
    for (const source of sources(join(ROOT, folder))) {
      const compiled = join(ROOT, "dist", relative(ROOT, source).replace(/\.ts$/, ".js"));
      const written = statSync(source).mtimeMs;
      if (!existsSync(compiled) || statSync(compiled).mtimeMs < written || bundled < written) {
        return false;
      }
    }
  }
  return true;
}

/** Whether dist/ (the compiled files and the bundle) was built from the sources as they are now. */
export const DIST_IS_CURRENT: boolean = builtFromCurrentSources();

/** The CLI's sources as ES modules: what a child runs when the build is not current. */
export const SOURCE_CLI_ENTRY: readonly string[] = Object.freeze([join(ROOT, "src/cli.ts")]);

/** Node's arguments that start the CLI, by absolute paths, so a child may run in any folder. */
export const CLI_ENTRY: readonly string[] = DIST_IS_CURRENT
  ? Object.freeze([join(ROOT, "dist/src/bin.js")])
  : SOURCE_CLI_ENTRY;

/**
 * The CLI as ES modules, from its sources: for tests that watch which packages a command loads
 * through a module hook, which sees ES modules only. The bundle defers the same modules'
 * initialisation to the same dynamic imports.
 */
export const MODULE_CLI_ENTRY: readonly string[] = SOURCE_CLI_ENTRY;
