/**
 * The sandbox package as one ES module file for the compiled suite (`scripts/compile-suite.mjs`
 * calls it after tsc): `packages/sandbox/suite-bundle/index.js`, ignored by git, which the
 * `controls-migrate-suite` condition of the package's "." export names. Loading fastify, ajv and
 * yargs as several hundred modules cost every test process that imports `controls-sandbox` about
 * 0.3 s of CPU; the one file costs about 0.1 s. Two packages stay outside, loaded from
 * node_modules: zod, which 43 of the 44 test files that import the sandbox load on their own (one
 * copy instead of two saves those 0.02 s; alone, zod costs 0.03 s more), and pino, which fastify
 * `require`s (bundling it saves nothing, and its transports look for files beside it).
 *
 * The bundle sits two folders below the repository root, as `src/contract/published-schema.ts`
 * does, so that its upward search for `schema/` finds the repository's copy. It is rebuilt only
 * when a file it was built from (listed in `inputs.json` beside it), the package manifest, the
 * lockfile or this script is newer than it, or missing.
 *
 * @example
 *   await bundleSandbox(); // true when it (re)built the bundle, false when it was current
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
export const SANDBOX_BUNDLE = join(ROOT, "packages/sandbox/suite-bundle/index.js");
const INPUTS = join(ROOT, "packages/sandbox/suite-bundle/inputs.json");
/** Files whose change may change the bundle without being among its inputs. */
const ALSO_WATCHED = [
  "package-lock.json",
  "packages/sandbox/package.json",
  "scripts/bundle-sandbox.mjs",
];
/** Bundled CommonJS modules `require` what stays outside (node's built-ins, pino). */
const BANNER =
  'import { createRequire as __bundleCreateRequire } from "node:module";\n' +
  "const require = __bundleCreateRequire(import.meta.url);";

function* typeScriptFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* typeScriptFiles(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

/**
 * Every file whose change calls for a new bundle, as paths from the repository root: the package's
 * sources, what the last build read (the CLI's contract and option kit, the bundled packages) and
 * {@link ALSO_WATCHED}. Without a previous build's list, the package's sources only.
 */
export function bundleInputs() {
  const inputs = new Set(ALSO_WATCHED);
  for (const file of typeScriptFiles(join(ROOT, "packages/sandbox/src"))) {
    inputs.add(file.slice(ROOT.length));
  }
  if (existsSync(INPUTS)) {
    for (const file of JSON.parse(readFileSync(INPUTS, "utf8"))) inputs.add(file);
  }
  return [...inputs];
}

/** Whether the bundle exists and no file of {@link bundleInputs} is missing or newer than it. */
export function bundleIsCurrent() {
  if (!existsSync(SANDBOX_BUNDLE) || !existsSync(INPUTS)) return false;
  const built = statSync(SANDBOX_BUNDLE).mtimeMs;
  return bundleInputs().every((file) => {
    const stat = statSync(join(ROOT, file), { throwIfNoEntry: false });
    return stat !== undefined && stat.mtimeMs <= built;
  });
}

/** Builds the bundle with esbuild unless it is current; true when it built. */
export async function bundleSandbox() {
  if (bundleIsCurrent()) return false;
  const { build } = await import("esbuild");
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ["packages/sandbox/src/index.ts"],
    outfile: SANDBOX_BUNDLE,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["pino", "zod", "zod/*"],
    banner: { js: BANNER },
    metafile: true,
    logLevel: "warning",
  });
  // Paths from the repository root (esbuild's are from absWorkingDir), so nothing names this machine.
  writeFileSync(INPUTS, `${JSON.stringify(Object.keys(result.metafile.inputs), null, 1)}\n`);
  return true;
}
