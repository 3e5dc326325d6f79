/**
 * How tests start the CLI in a child process: the installed command as it ships (`dist/src/bin.js`,
 * which runs the bundle `dist/cli.cjs` with its code cache) when both were built from the sources
 * as they are now (`npm test` builds first), else the sources under tsx. A child under tsx spends about a second more CPU starting, two under PGlite (its thread
 * loads tsx again), and the suite starts several hundred children.
 *
 * @example
 *   spawn(process.execPath, [...CLI_ENTRY, "plan", "--json"], { cwd: scratchCwd() });
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

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
const built = DIST_IS_CURRENT;

/**
 * The compiled database thread (`dist/src/db/connection/pglite-worker.js`) when the build is of
 * the sources as they are now, for `runPgliteThreadsFrom`; else undefined.
 */
export const COMPILED_PGLITE_WORKER: URL | undefined = built
  ? pathToFileURL(join(ROOT, "dist/src/db/connection/pglite-worker.js"))
  : undefined;
const fromSources = ["--import", import.meta.resolve("tsx"), join(ROOT, "src/cli.ts")];

/** Node's arguments that start the CLI, by absolute paths, so a child may run in any folder. */
export const CLI_ENTRY: readonly string[] = Object.freeze(
  built ? [join(ROOT, "dist/src/bin.js")] : fromSources,
);

/**
 * The CLI as ES modules, not bundled (`dist/src/cli.js`): for tests that watch which packages a
 * command loads through a module hook, which sees ES modules only. The bundle defers the same
 * modules' initialisation to the same dynamic imports.
 */
export const MODULE_CLI_ENTRY: readonly string[] = Object.freeze(
  built ? [join(ROOT, "dist/src/cli.js")] : fromSources,
);

/** Whether this suite runs compiled: `npm test` compiles each test and helper beside its source. */
const SUITE_COMPILED = import.meta.url.endsWith(".js");
/** The condition that points the sandbox package's exports at its compiled entry files. */
const COMPILED_CONDITION = "--conditions=controls-migrate-suite";

/**
 * Node's arguments that run a TypeScript file of the repository (a script, a helper process) in a
 * child: its compiled `.js` beside it when this suite runs compiled, else the source under tsx,
 * whose module hooks cost a child about a second of CPU.
 *
 * @example
 *   spawn(process.execPath, [...tsEntry(join(ROOT, "scripts/sandbox-from-db.ts")), "--help"]);
 */
export function tsEntry(tsPath: string): string[] {
  return SUITE_COMPILED
    ? [COMPILED_CONDITION, compiledBeside(tsPath)]
    : ["--import", import.meta.resolve("tsx"), tsPath];
}

const compiledBeside = (tsPath: string) => tsPath.replace(/\.ts$/, ".js");

/**
 * A module of the repository for a child's `import()`, as a file URL: the compiled `.js` when this
 * suite runs compiled (the child then needs no tsx), else the `.ts` source.
 */
export function moduleUrl(tsPath: string): string {
  return pathToFileURL(SUITE_COMPILED ? compiledBeside(tsPath) : tsPath).href;
}

/**
 * Node's arguments under which a child resolves `controls-sandbox` as this suite does: when it
 * runs compiled, the condition that names the sandbox's one-file bundle (`spawnSandbox`'s bin then
 * runs it without tsx); from sources, none.
 */
export const SANDBOX_CONDITION: readonly string[] = SUITE_COMPILED ? [COMPILED_CONDITION] : [];

/** `--import tsx` when a child loads `.ts` modules (see {@link moduleUrl}); compiled, the condition. */
export const TSX_FOR_MODULES: readonly string[] = SUITE_COMPILED
  ? [COMPILED_CONDITION]
  : ["--import", import.meta.resolve("tsx")];
