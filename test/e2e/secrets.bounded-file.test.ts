/**
 * `--client-secret-file` is a file the tool did not write, so it is read within bounds: /dev/zero,
 * a FIFO with no writer, a folder or an oversized file are refused at once with a message naming the
 * flag and the file, in little memory, and a real secret file still works.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { readSecretFileSync } from "../../src/config/secret-file.ts";
import { collect, REPO_ROOT } from "../helpers/cli.ts";
import { CLI_ENTRY } from "../helpers/cli-entry.ts";

const TIME = "/usr/bin/time";
const hasTime = existsSync(TIME);

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "cm-secret-file-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** `plan` with the secret from `file`, under GNU time: the result and its peak RSS. */
async function planWithSecretFile(file: string) {
  const out = join(dir, "out");
  const args = ["-f", "peak_rss_kb=%M", process.execPath, ...CLI_ENTRY];
  const child = spawn(
    TIME,
    [...args, "plan", "--client-secret-file", file, "--out", out, "--data-dir", join(dir, "data")],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        CONTROLS_LOG_LEVEL: undefined,
        OAUTH_CLIENT_SECRET: undefined,
        API_BASE_URL: "http://127.0.0.1:9",
        OAUTH_TOKEN_URL: "http://127.0.0.1:9/oauth2/token",
        OAUTH_CLIENT_ID: "cm",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const r = await collect(child);
  const kb = Number(/peak_rss_kb=(\d+)/.exec(r.stderr)?.[1]);
  return { ...r, peakMb: kb / 1024 };
}

describe("--client-secret-file read within bounds", {
  skip: hasTime ? false : `${TIME} is not installed, so peak RSS cannot be measured`,
  timeout: 60_000,
}, () => {
  before(async () => {
    // What starting the CLI costs here (from sources, a loaded machine): a missing file, refused at once.
    const r = await planWithSecretFile(join(dir, "missing"));
    assert.match(r.stderr, /--client-secret-file \S+missing cannot be read: ENOENT/);
  });

  it("/dev/zero is refused as a device, naming the flag and the file (a read of it would never end: the test ends), under 200 MB of peak RSS", async () => {
    const r = await planWithSecretFile("/dev/zero");
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /--client-secret-file \/dev\/zero is a device, not a regular file/);
    assert.ok(r.peakMb > 0 && r.peakMb < 200, `peak RSS ${r.peakMb} MB`);
  });

  it("a FIFO with no writer is refused as a FIFO without blocking in open (an open would never return: the test ends), under 200 MB of peak RSS", async () => {
    const fifo = join(dir, "secret.fifo");
    const made = spawnSync("mkfifo", [fifo]);
    assert.equal(made.status, 0, String(made.stderr));
    const r = await planWithSecretFile(fifo);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /--client-secret-file \S+secret\.fifo is a FIFO \(named pipe\), not a regular file/,
    );
    assert.ok(r.peakMb > 0 && r.peakMb < 200, `peak RSS ${r.peakMb} MB`);
  });
});

describe("readSecretFileSync", () => {
  it("refuses a folder and a file over 4096 bytes, naming the flag, the file and the size", () => {
    const big = join(dir, "big");
    writeFileSync(big, "x".repeat(5000));
    assert.deepEqual(readSecretFileSync(big), {
      problem: `--client-secret-file ${big} holds 5000 bytes, more than a client secret's 4096; is it the right file?`,
    });
    assert.match(
      (readSecretFileSync(dir) as { problem: string }).problem,
      /is a folder, not a regular file/,
    );
  });

  it("reads a regular secret file trimmed, and calls an empty one empty", () => {
    const ok = join(dir, "ok");
    writeFileSync(ok, "  s3cret-value \n");
    assert.deepEqual(readSecretFileSync(ok), { secret: "s3cret-value" });
    const empty = join(dir, "empty");
    writeFileSync(empty, "\n");
    assert.deepEqual(readSecretFileSync(empty), {
      problem: `--client-secret-file ${empty} is empty.`,
    });
  });
});
