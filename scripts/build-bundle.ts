/**
 * `npm run build`'s bundles. The CLI as one CommonJS file, `dist/cli.cjs`, and V8's code cache
 * for it, `dist/cli.cjs.<hash>.cache`, which the installed command (`src/bin.ts`) runs. Node 20 has no
 * compile cache for ES modules, and the CLI with its dependencies is about 300 of them; one bundle
 * compiled once starts `status` in about half the time (`npm run bench`, scenario k).
 *
 * - PGlite stays outside: it runs in its own thread from `dist/src/db/connection/pglite-worker.js`
 *   and finds its WebAssembly beside its own files.
 * - `import.meta.url` is the bundle's own URL; every module that uses it walks up from there to the
 *   package root (version.ts, published-schema.ts) or knows the layout (pglite-thread.ts).
 * - The cache is written by one `--help` run: V8 keeps the functions that run compiled, so the
 *   start-up path of every command is in it; the rest compiles lazily, as without a cache.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildOptions, build, type Plugin } from "esbuild";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const OUT = `${ROOT}dist/cli.cjs`;

/**
 * string-width (under yargs and cliui) does two costly things when it loads, though only rendering
 * help measures text, so both are made on first use instead:
 * - it makes an `Intl.Segmenter`: about 20 ms of ICU set-up;
 * - it creates `/^\p{RGI_Emoji}$/v`: V8 builds the pattern's set of emoji strings when the
 *   literal is first evaluated, 18–26 ms measured, not when it first matches.
 * A copy that makes either otherwise fails the build, so an upgrade cannot undo this quietly.
 */
const LAZY_STRING_WIDTH: readonly (readonly [marker: RegExp, eager: string, lazy: string])[] = [
  [
    /new Intl\.Segmenter\(/,
    "const segmenter = new Intl.Segmenter();",
    "let madeSegmenter; const segmenter = { segment: (s) => (madeSegmenter ??= new Intl.Segmenter()).segment(s) };",
  ],
  [
    /=\s*\/[^/\n]*\\p\{RGI_Emoji\}[^/\n]*\/v/,
    "const rgiEmojiRegex = /^\\p{RGI_Emoji}$/v;",
    "let madeRgiEmoji; const rgiEmojiRegex = { test: (s) => (madeRgiEmoji ??= /^\\p{RGI_Emoji}$/v).test(s) };",
  ],
];

const lazyStringWidth: Plugin = {
  name: "lazy-string-width",
  setup(b) {
    b.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/ }, ({ path }) => {
      let code = readFileSync(path, "utf8");
      const original = code;
      for (const [marker, eager, lazy] of LAZY_STRING_WIDTH) {
        if (!marker.test(code)) continue;
        if (!code.includes(eager)) throw new Error(`${path}: no "${eager}" to make lazy`);
        code = code.replace(eager, lazy);
      }
      return code === original ? undefined : { contents: code, loader: "js" };
    });
  },
};

/** What both bundles share: node 20, PGlite outside (its thread runs from `dist/src/`). */
const COMMON = {
  plugins: [lazyStringWidth],
  bundle: true,
  platform: "node" as const,
  target: "node20",
  // Node 20 has the RegExp `v` flag: string-width's `v` patterns stay literals, which the lazy
  // holders above can defer, rather than `new RegExp` calls.
  supported: { "regexp-set-notation": true },
  external: ["@electric-sql/pglite", "pg-native"],
  legalComments: "none",
  logLevel: "warning" as const,
} satisfies BuildOptions;

const result = await build({
  ...COMMON,
  write: false,
  entryPoints: [`${ROOT}src/cli.ts`],
  outfile: OUT,
  format: "cjs",
  define: { "import.meta.url": "__bundle_url" },
  banner: { js: 'var __bundle_url = require("node:url").pathToFileURL(__filename).href;' },
  // Smaller to read and hash at every start; names kept for stack traces and error classes.
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  // import.meta is only used for its url (defined above).
  logOverride: { "empty-import-meta": "silent" },
});

// V8 checks a code cache against its source's length only, so the cache is named by a hash of
// the bundle's text, written on its first line (in place of the hashbang): a cache made for
// another bundle is never used (`src/bin.ts`).
const bundled = result.outputFiles?.[0]?.text ?? "";
const hash = createHash("sha256").update(bundled).digest("hex").slice(0, 16);
const text = bundled.replace(/^(#![^\n]*)?/, `// build ${hash}`);
const cache = `${OUT}.${hash}.cache`;
if (existsSync(cache) && existsSync(OUT) && readFileSync(OUT, "utf8") === text) {
  // Unchanged: the bundle and its cache stay (other processes may be running them); the bundle's
  // time says it is as new as the sources.
  const now = new Date();
  utimesSync(OUT, now, now);
} else {
  writeFileSync(`${OUT}.${process.pid}.tmp`, text);
  renameSync(`${OUT}.${process.pid}.tmp`, OUT);
  for (const old of readdirSync(dirname(OUT)).filter((f) => /^cli\.cjs\..*cache$/.test(f)))
    rmSync(join(dirname(OUT), old), { force: true });
  makeCache(cache);
}

/**
 * `npm run demo` (`scripts/run-demo.mjs`) as one ES module with the sandbox in it: from sources, its
 * ~400 TypeScript modules cost seconds of CPU and a hundred MB at every start. A repository
 * script: the package does not ship it.
 */
await build({
  ...COMMON,
  entryPoints: [`${ROOT}scripts/demo.ts`],
  outfile: `${ROOT}dist/demo.mjs`,
  format: "esm",
  // The CommonJS packages in it call `require` for node's modules.
  banner: {
    js: 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);',
  },
});

/** One `--help` run of the launcher writes the cache (`src/bin.ts`). */
function makeCache(cache: string): void {
  const run = spawnSync(process.execPath, [`${ROOT}dist/src/bin.js`, "--help"], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (run.status !== 0) throw new Error(`dist/src/bin.js --help exited ${run.status}`);
  if (!existsSync(cache)) throw new Error(`dist/src/bin.js --help wrote no ${cache}`);
}
