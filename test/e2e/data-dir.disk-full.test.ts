/**
 * A full disk under --data-dir (the embedded PGlite database on small tmpfs mounts, mounted here as
 * root): too small for a new database, filled by a seed, and filled while an apply reads. Each
 * error names the folder and --data-dir, never Node's or PostgreSQL's bare words, and once there is
 * room again the database opens with what it held. Skipped where tmpfs cannot be mounted.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { runCli } from "../helpers/cli.ts";
import { startHostilePlatform } from "../helpers/hostile-platform.ts";

const root = mkdtempSync(join(tmpdir(), "cm-data-dir-full-"));
const mounts: string[] = [];

/** Mounts a tmpfs of `size` at a new folder under `root`; the reason it cannot, as a string. */
function mountTmpfs(name: string, size: string): { dir: string } | string {
  const dir = join(root, name);
  mkdirSync(dir);
  const r = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]);
  if (r.status !== 0)
    return `a tmpfs cannot be mounted here (${String(r.stderr).trim() || `exit ${r.status}`}); run as root to test a full disk`;
  mounts.push(dir);
  return { dir };
}

const probe = mountTmpfs("probe", "1m");
const skip = typeof probe === "string" ? probe : false;

after(() => {
  for (const dir of mounts) spawnSync("umount", [dir]);
  rmSync(root, { recursive: true, force: true });
});

/** The pattern of the message naming `dir` and --data-dir as a full disk. */
const namesDataDir = (dir: string) =>
  new RegExp(
    `ERROR No space left on the device for ${dir} \\(--data-dir\\): the disk holding it is full.*Free space there, or choose another --data-dir\\.`,
  );

/** Fills the disk holding `dir` until `leaveBytes` are free. */
function fillDisk(dir: string, leaveBytes: number): string {
  const s = statfsSync(dir);
  const filler = join(dir, "filler");
  writeFileSync(filler, Buffer.alloc(Math.max(0, s.bavail * s.bsize - leaveBytes)));
  return filler;
}

describe("a full disk under --data-dir (PGlite)", { skip, timeout: 300_000 }, () => {
  it("a disk too small for a new database: plan is refused naming the folder and --data-dir", async () => {
    const m = mountTmpfs("tiny", "8m");
    assert.ok(typeof m !== "string", String(m));
    const data = join(m.dir, "data");
    const r = await runCli(["plan", "--no-progress", "--data-dir", data], {
      API_BASE_URL: "http://127.0.0.1:9",
      OAUTH_TOKEN_URL: "http://127.0.0.1:9/oauth2/token",
      OAUTH_CLIENT_ID: "cm",
      OAUTH_CLIENT_SECRET: "data-dir-secret-Pw3",
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, namesDataDir(data));
    assert.doesNotMatch(r.stderr, /ENOSPC: no space left on device/);
  });

  it("a seed that fills the disk stops naming the folder and --data-dir, the full folder is refused the same way, and with room again the database opens", async () => {
    const m = mountTmpfs("seeded", "48m");
    assert.ok(typeof m !== "string", String(m));
    const data = join(m.dir, "data");
    const seed = await runCli(["db", "seed", "--identities", "300000", "--data-dir", data]);
    assert.equal(seed.code, 1, seed.stderr);
    assert.match(seed.stderr, namesDataDir(data));
    // PostgreSQL's follow-on errors of a full disk, never shown alone.
    assert.doesNotMatch(seed.stderr, /ERROR (cannot drop active portal|XLogBeginInsert)/);

    const full = await runCli(["runs", "--data-dir", data]);
    assert.equal(full.code, 1, full.stderr);
    assert.match(full.stderr, namesDataDir(data));

    const grown = spawnSync("mount", ["-o", "remount,size=200m", m.dir]);
    assert.equal(grown.status, 0, String(grown.stderr));
    const roomy = await runCli(["runs", "--data-dir", data]);
    assert.equal(roomy.code, 0, roomy.stderr);
  });

  it("an apply whose disk fills while it reads stops naming the folder and --data-dir, sends no write, and runs then shows it failed with that error", async () => {
    const N = 3000;
    const ids = [...syntheticIdentities(N, 5)].map((r) => r.id);
    const m = mountTmpfs("apply", "100m");
    assert.ok(typeof m !== "string", String(m));
    const data = join(m.dir, "data");
    const seed = await runCli([
      "db",
      "seed",
      "--identities",
      String(N),
      "--seed",
      "5",
      "--data-dir",
      data,
    ]);
    assert.equal(seed.code, 0, seed.stderr);
    // Room for the run to start, not for what its reading stores (the tables grow page by page).
    const filler = fillDisk(m.dir, 64 * 1024);
    const platform = await startHostilePlatform({ identities: ids });
    try {
      const out = join(root, "apply-out");
      const r = await runCli(
        ["apply", "--yes", "--no-progress", "--state", "bulk", "--out", out, "--data-dir", data],
        platform.env,
      );
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, namesDataDir(data));
      assert.equal(platform.calls["POST /v2/identity/controls"] ?? 0, 0);
    } finally {
      await platform.close();
    }
    rmSync(filler);
    const runs = await runCli(["runs", "--json", "--data-dir", data]);
    assert.equal(runs.code, 0, runs.stderr);
    const listed = runs.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { status: string; error: string | null });
    assert.equal(listed.length, 1, runs.stdout);
    assert.notEqual(listed[0]?.status, "running");
    assert.match(listed[0]?.error ?? "", /No space left on the device for \S+ \(--data-dir\)/);
  });
});
