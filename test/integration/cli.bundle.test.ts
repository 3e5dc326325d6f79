/**
 * The installed command (`dist/src/bin.js`) runs the bundle `dist/cli.cjs` through V8's code cache
 * `dist/cli.cjs.<build>.cache` (scripts/build-bundle.ts, src/bin.ts). Checked on a copy of the
 * built layout in a temporary folder, so the repository's own cache is never touched.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { REPO_ROOT } from "../helpers/cli.ts";
import { backends } from "../helpers/db.ts";

const built = existsSync(join(REPO_ROOT, "dist/cli.cjs"));

describe("the installed command and its code cache", {
  skip: !built && "no dist/cli.cjs: run npm run build",
}, () => {
  let home: string;
  let bin: string;
  let build: string;
  let cache: string;
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [bin, ...args], { cwd: home, encoding: "utf8" });
  const caches = () => readdirSync(join(home, "dist")).filter((f) => f.endsWith(".cache"));

  before(() => {
    home = mkdtempSync(join(tmpdir(), "cm-bundle-"));
    copyFileSync(join(REPO_ROOT, "package.json"), join(home, "package.json"));
    // The built layout without its cache; PGlite (outside the bundle) from the repository's modules.
    cpSync(join(REPO_ROOT, "dist"), join(home, "dist"), {
      recursive: true,
      filter: (path) => !path.endsWith(".cache"),
    });
    symlinkSync(join(REPO_ROOT, "node_modules"), join(home, "node_modules"), "dir");
    bin = join(home, "dist/src/bin.js");
    build =
      /^\/\/ build ([0-9a-f]{16})\n/.exec(readFileSync(join(home, "dist/cli.cjs"), "utf8"))?.[1] ??
      "";
    cache = join(home, `dist/cli.cjs.${build}.cache`);
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  it("names the bundle's build on its first line", () => {
    assert.match(build, /^[0-9a-f]{16}$/);
  });

  it("leaves string-width's segmenter and emoji pattern to its first use, not to every start", () => {
    // Each costs about 20 ms when made; only help text measures widths (scripts/build-bundle.ts).
    const text = readFileSync(join(home, "dist/cli.cjs"), "utf8");
    // Booleans, not assert.match: a failure would print the whole bundle.
    const eagerEmoji = /rgiEmojiRegex\d*\s*=\s*\/\^\\p\{RGI_Emoji\}/.test(text);
    const eagerSegmenter = /\bsegmenter\d*\s*=\s*new Intl\.Segmenter/.test(text);
    assert.equal(eagerEmoji, false, "the emoji pattern is made as the bundle loads");
    assert.equal(eagerSegmenter, false, "a segmenter is made as the bundle loads");
    assert.ok(
      /\?\?=\s*\/\^\\p\{RGI_Emoji\}\$\/v\)\.test/.test(text),
      "no emoji pattern made on use",
    );
    assert.ok(/\?\?=\s*new Intl\.Segmenter\)\.segment/.test(text), "no segmenter made on use");
  });

  it("writes the cache, named by the build, on the first run that finds none", () => {
    assert.deepEqual(caches(), []);
    const r = run("--help");
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^controls-migrate <command> \[options\]/);
    assert.deepEqual(caches(), [`cli.cjs.${build}.cache`]);
    assert.ok(statSync(cache).size > 100_000, `a cache of ${statSync(cache).size} bytes`);
  });

  it("starts from that cache afterwards without writing it again, with the same output", () => {
    const before = readFileSync(cache);
    const written = statSync(cache).mtimeMs;
    const first = run("--help").stdout;
    const r = run("plan", "--help");
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /controls-migrate plan/);
    assert.equal(run("--help").stdout, first);
    // V8 accepted the cache: it was not written again.
    assert.equal(statSync(cache).mtimeMs, written);
    assert.ok(readFileSync(cache).equals(before));
  });

  it("replaces a cache V8 rejects, and still runs the command", () => {
    writeFileSync(cache, Buffer.alloc(4096, 7));
    const r = run("--help");
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^controls-migrate <command> \[options\]/);
    assert.ok(statSync(cache).size > 100_000, "a valid cache was written in its place");
    assert.deepEqual(caches(), [`cli.cjs.${build}.cache`], "no temporary file is left");
  });

  for (const backend of backends) {
    it(`keeps a cache it rewrites valid though a command on ${backend.name} changed V8's flags`, async () => {
      // A command that opens a database sets V8 flags (heap growth; on PGlite, the WebAssembly
      // tiers), and V8 stamps a cache with the flags in force when it is made.
      const target = await backend.target();
      try {
        writeFileSync(cache, Buffer.alloc(4096, 7));
        const rewriting = run("runs", ...target.args);
        assert.equal(rewriting.status, 0, rewriting.stderr);
        assert.ok(statSync(cache).size > 100_000, "the rejected cache was written again");
        const written = readFileSync(cache);
        const writtenAt = statSync(cache).mtimeMs;
        const next = run("runs", ...target.args);
        assert.equal(next.status, 0, next.stderr);
        assert.equal(next.stdout, rewriting.stdout);
        // The next start accepted it: it was not written again.
        assert.equal(statSync(cache).mtimeMs, writtenAt);
        assert.ok(readFileSync(cache).equals(written));
      } finally {
        await target.drop();
      }
    });
  }

  it("answers --version from package.json without reading the bundle", () => {
    rmSync(join(home, "dist/cli.cjs"));
    const r = run("--version");
    assert.equal(r.status, 0, r.stderr);
    const { version } = JSON.parse(readFileSync(join(home, "package.json"), "utf8"));
    assert.equal(r.stdout, `${version}\n`);
  });
});
