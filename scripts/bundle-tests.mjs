/**
 * The compiled suite's test files, each as one ES module with what it imports (`scripts/compile-suite.mjs`
 * calls it last): `test/.suite-bundle/` for the CLI package, `packages/sandbox/test/.suite-bundle/`
 * for the sandbox's, both ignored by git; `npm test` runs these. A test file that imported the
 * compiled sources, kysely and pg as several hundred modules spent about 0.3 s of CPU in node's
 * module loader before its first test (one e2e file: 0.94 CPU-s a run, 0.66 bundled); the CLI
 * package's suite, PGlite only, ran in 253 s bundled against 275 s unbundled.
 *
 * - Each `test/<folder>/<name>.test.js` becomes `.suite-bundle/<folder>/<name>.test.js`; the code
 *   test files share goes into `.suite-bundle/chunks/`, one folder deep as well.
 * - Every module keeps its own location: `import.meta.url` in a bundled module is that of the file
 *   it came from, computed from the bundle's own URL (no path of this machine is written), so
 *   `new URL("./x", import.meta.url)`, workers, `createRequire` and spawned helper scripts find
 *   what they found unbundled. A module using `import.meta.dirname`, `import.meta.filename` or a
 *   relative `import.meta.resolve` fails the build, naming the file: those would see the bundle.
 *   The check reads the module's text, so a string that spells one of them fails it too.
 * - Left outside, loaded from node_modules: PGlite (its WebAssembly sits beside it), pino and
 *   thread-stream (their transports start workers from files beside them), the build tools, and
 *   optional native modules.
 * - The folder is made again at every call (about a second for both packages), so no bundle is
 *   ever older than its sources.
 *
 * Run a single test unbundled with `node --test test/e2e/x.test.js` (compiled) or
 * `node --import tsx --test test/e2e/x.test.ts` (sources).
 *
 * @example
 *   await bundleTests(); // both packages' test bundles, made again
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
/** Where the bundles of a test folder go, inside it. */
export const BUNDLE_FOLDER = ".suite-bundle";
/** The shared chunks' folder, as deep as the test folders so one relative path fits all. */
const CHUNKS = "chunks";
/** Packages loaded from node_modules rather than bundled (see the file's comment). */
const EXTERNAL = [
  "@electric-sql/pglite",
  "@electric-sql/pglite/*",
  "pino",
  "thread-stream",
  "esbuild",
  "tsx",
  "tsx/*",
  "typescript",
  "playwright-core",
  "fsevents",
  "pg-native",
];
/** The URL of the bundle file running, which esbuild's `define` leaves alone in a banner. */
const FILE_URL = "__suiteBundleFileUrl";
/**
 * Every bundle file's first lines: its own URL, and the `require` with which bundled CommonJS
 * modules load what stays outside (node's built-ins, pino).
 */
const BANNER =
  'import { createRequire as __suiteBundleCreateRequire } from "node:module";\n' +
  `const ${FILE_URL} = import.meta.url;\n` +
  `const require = __suiteBundleCreateRequire(${FILE_URL});`;
/** The name each bundled module's own URL is bound to, and `import.meta.url` is replaced with. */
const MODULE_URL = "__suiteModuleUrl";
/** What would see the bundle's location instead of the module's. */
const UNSUPPORTED = /import\.meta\.(dirname|filename)\b|import\.meta\.resolve\(\s*["'`]\.\.?\//;

/** The test files of a test folder: `<folder>/<name>.test.js`, one level deep, sorted. */
export function testEntries(testRoot) {
  const entries = [];
  for (const folder of readdirSync(testRoot, { withFileTypes: true })) {
    if (!folder.isDirectory() || folder.name.startsWith(".")) continue;
    for (const file of readdirSync(join(testRoot, folder.name))) {
      if (file.endsWith(".test.js")) entries.push(join(testRoot, folder.name, file));
    }
  }
  return entries.sort();
}

/**
 * The esbuild plugin that gives each module its own `import.meta.url`: a module whose text names
 * it starts with a binding of its source file's URL, computed from the URL of the bundle file
 * that runs it (one folder below `outdir`, as every entry and chunk is), which the `define` of
 * {@link bundleTestFolder} puts wherever the code reads `import.meta.url`.
 */
export function moduleUrlPlugin(outdir) {
  const fromOutput = join(outdir, CHUNKS);
  return {
    name: "module-url",
    setup(build) {
      build.onLoad({ filter: /\.(m?js|cjs)$/ }, (args) => {
        const text = readFileSync(args.path, "utf8");
        if (!text.includes("import.meta")) return undefined;
        const bad = UNSUPPORTED.exec(text);
        if (bad) {
          throw new Error(
            `${relative(ROOT, args.path)}: ${bad[0]} cannot be bundled (${BUNDLE_FOLDER})`,
          );
        }
        const rel = relative(fromOutput, args.path).split(sep).join("/");
        const binding = `const ${MODULE_URL} = new URL(${JSON.stringify(rel)}, ${FILE_URL}).href;\n`;
        return { contents: binding + text, loader: "js" };
      });
    },
  };
}

/**
 * Bundles every test file of `testRoot` into `testRoot/.suite-bundle/`, made afresh; returns the
 * number of test files. The bundles' comments name each module by its path from `root`.
 */
export async function bundleTestFolder(testRoot, root = ROOT) {
  const { build } = await import("esbuild");
  const outdir = join(testRoot, BUNDLE_FOLDER);
  rmSync(outdir, { recursive: true, force: true });
  const entryPoints = testEntries(testRoot);
  await build({
    absWorkingDir: root,
    entryPoints,
    outdir,
    outbase: testRoot,
    bundle: true,
    splitting: true,
    chunkNames: `${CHUNKS}/[name]-[hash]`,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["controls-migrate-suite"],
    external: EXTERNAL,
    define: { "import.meta.url": MODULE_URL },
    banner: { js: BANNER },
    plugins: [moduleUrlPlugin(outdir)],
    logLevel: "warning",
  });
  return entryPoints.length;
}

/** Both packages' test bundles; the number of test files bundled. */
export async function bundleTests() {
  const folders = ["test", "packages/sandbox/test"];
  let files = 0;
  for (const folder of folders) files += await bundleTestFolder(join(ROOT, folder));
  return files;
}
