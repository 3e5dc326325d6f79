/**
 * The package as a user gets it: packed from a fresh checkout of HEAD (never built: `prepack`
 * must build dist/ and the PGlite template), installed with `npm install -g` into a temporary
 * prefix from the npm registry, and started from another folder.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { MIGRATION_NAMES } from "../../migrations/names.ts";
import { REPO_ROOT } from "../helpers/cli.ts";

const run = promisify(execFile);
const VERSION = (
  JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
    version: string;
  }
).version;

/** npm with its own cache and no chatter (update notices, funding, audit). */
function npmEnv(cache: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    npm_config_cache: cache,
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
    npm_config_loglevel: "warn",
  };
}

/** Why the registry cannot be used, or undefined when it answers. */
async function registryUnreachable(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    await run("npm", ["ping"], { env, timeout: 30_000 });
    return undefined;
  } catch (err) {
    return `the npm registry does not answer npm ping: ${(err as Error).message.split("\n")[0]}`;
  }
}

describe("the tarball packed from a fresh checkout", { timeout: 1_800_000 }, () => {
  let tmp: string;
  let env: NodeJS.ProcessEnv;
  let skip: string | undefined;
  let tarball: string;
  let packStderr: string;
  let installStderr: string;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "cm-package-"));
    env = npmEnv(join(tmp, "npm-cache"));
    skip = await registryUnreachable(env);
    if (skip) return;
    const checkout = join(tmp, "checkout");
    mkdirSync(checkout);
    // HEAD's files only (no dist/, nothing untracked); the build tools come from this repository.
    await run("sh", ["-c", `git archive HEAD | tar -x -C "${checkout}"`], { cwd: REPO_ROOT });
    symlinkSync(join(REPO_ROOT, "node_modules"), join(checkout, "node_modules"), "dir");
    const packed = await run("npm", ["pack", "--json", "--pack-destination", tmp], {
      cwd: checkout,
      env,
      // The build (tsc and the PGlite template) takes 1–2 minutes, far more on a loaded machine.
      timeout: 900_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    packStderr = packed.stderr;
    const json = packed.stdout.slice(packed.stdout.indexOf("["));
    tarball = join(tmp, (JSON.parse(json) as { filename: string }[])[0]!.filename);
    const installed = await run(
      "npm",
      ["install", "-g", "--prefix", join(tmp, "prefix"), tarball],
      { cwd: tmp, env, timeout: 600_000 },
    );
    installStderr = installed.stderr;
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("is packed by npm pack without a warning", (t) => {
    if (skip) return t.skip(skip);
    assert.doesNotMatch(packStderr, /npm warn/i, packStderr);
  });

  it("installs with npm install -g without a warning (no EBADENGINE, no deprecation)", (t) => {
    if (skip) return t.skip(skip);
    assert.doesNotMatch(installStderr, /npm warn|EBADENGINE/i, installStderr);
  });

  it("runs `controls-migrate --version` from another folder and prints only the version", async (t) => {
    if (skip) return t.skip(skip);
    const elsewhere = mkdtempSync(join(tmp, "elsewhere-"));
    const out = await run(join(tmp, "prefix", "bin", "controls-migrate"), ["--version"], {
      cwd: elsewhere,
      env,
      timeout: 30_000,
    });
    assert.equal(out.stdout, `${VERSION}\n`);
    assert.equal(out.stderr, "");
  });

  it("ships the pre-initialised PGlite data folder made by the PGlite version it installs", async (t) => {
    if (skip) return t.skip(skip);
    const root = join(tmp, "prefix", "lib", "node_modules", "controls-migrate");
    const meta = JSON.parse(readFileSync(join(root, "dist/pglite/template.json"), "utf8")) as {
      pglite: string;
      migrations: string[];
    };
    const pglite = JSON.parse(
      readFileSync(join(root, "node_modules/@electric-sql/pglite/package.json"), "utf8"),
    ) as { version: string };
    assert.equal(meta.pglite, pglite.version);
    assert.deepEqual(meta.migrations, MIGRATION_NAMES);
  });

  it("keeps the template it ships in the build cache this checkout shares, byte for byte", (t) => {
    if (skip) return t.skip(skip);
    const root = join(tmp, "prefix", "lib", "node_modules", "controls-migrate");
    const shipped = readFileSync(join(root, "dist/pglite/template.tar.gz"));
    const cache = join(REPO_ROOT, "node_modules/.cache/controls-migrate-build");
    const kept = readdirSync(cache).filter((f) => readFileSync(join(cache, f)).equals(shipped));
    assert.equal(kept.length, 1, `no file of ${cache} is the shipped template`);
  });
});
