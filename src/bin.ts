#!/usr/bin/env node
/**
 * The installed command (package.json `bin`). A CLI that an operator runs in a watch loop should
 * start at about node's speed: resolving and loading the ~300 modules of the CLI and its
 * dependencies one by one (zod alone is 95) costs more than the work of `status`. So the build also bundles the CLI into one CommonJS file, `dist/cli.cjs`
 * (`scripts/build-bundle.ts`), and this launcher runs it through `vm.Script` with V8's code cache
 * (`dist/cli.cjs.<build>.cache`): the bundle is parsed and compiled once, at build time, not at every start.
 *
 * - `--version` reads package.json and loads nothing else.
 * - A cache V8 rejects (another node version) is rewritten at exit, atomically, when the folder is
 *   writable; otherwise the bundle is compiled as usual, which is only slower. The flags a command
 *   changed are set back to V8's defaults first (`v8-flags.ts`): V8 stamps a cache with the flags
 *   in force, and a cache stamped with a command's flags would be rejected, and rewritten, at
 *   every start after.
 * - Without a bundle (the sources, or a tsc-only build) it imports `cli.ts` / `cli.js`.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { restoreV8FlagDefaults } from "./v8-flags.ts";
import { asksVersionOnly, TOOL_VERSION } from "./version.ts";

/** The bundle beside the compiled launcher: `dist/src/bin.js` → `dist/cli.cjs`. */
const BUNDLE = fileURLToPath(new URL("../cli.cjs", import.meta.url));

/** Runs the bundle as node would run a CommonJS main module, with its code cache when valid. */
function runBundle(file: string): void {
  // The first line names the bundle's build (`scripts/build-bundle.ts`); so does its cache's name.
  const source = readFileSync(file, "utf8");
  const build = /^\/\/ build ([0-9a-f]+)/.exec(source)?.[1];
  const cacheFile = build ? `${file}.${build}.cache` : `${file}.cache`;
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname) {${source}\n})`,
    { filename: file, cachedData },
  );
  if (cachedData === undefined || script.cachedDataRejected) {
    // At exit, so the cache also holds the functions this run compiled.
    process.once("exit", () => {
      try {
        restoreV8FlagDefaults();
        const tmp = `${cacheFile}.${process.pid}.tmp`;
        writeFileSync(tmp, script.createCachedData());
        renameSync(tmp, cacheFile);
      } catch {
        // A read-only install: no cache, a slower start.
      }
    });
  }
  const module = { exports: {} };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper(module.exports, createRequire(file), module, file, dirname(file));
}

const args = process.argv.slice(2);
if (asksVersionOnly(args)) {
  process.stdout.write(`${TOOL_VERSION}\n`);
} else if (existsSync(BUNDLE)) {
  runBundle(BUNDLE);
} else {
  await import("./cli.ts");
}
