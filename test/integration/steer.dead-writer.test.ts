/**
 * On PGlite a read command (`runs`, `show`, `report`) and `status` ask the running writer through
 * its local channel while its status file is fresh. A writer killed a moment ago (SIGKILL, or a
 * forced second SIGINT) leaves that file behind: the channel then looks at the data folder's lock,
 * whose holder no longer runs, and gives up at once instead of waiting its whole timeout (120 s
 * for a read command).
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { acquireDataDirLock, dataDirHolderAlive } from "../../src/db/connection/data-dir-lock.ts";
import { currentRequester } from "../../src/db/journal/run-control-queries.ts";
import {
  localChannelPaths,
  readFreshStatus,
  sendLocalRequest,
} from "../../src/migration/steer/local-channel.ts";
import { lockHeldByDeadProcess } from "../helpers/dead-lock-holder.ts";

describe("the local channel of a writer that was killed", () => {
  let home: string;
  let dataDir: string;
  const writeStatus = () =>
    writeFileSync(
      localChannelPaths(dataDir).statusFile,
      JSON.stringify({ run_id: "r1", mode: "apply", status: "running", written_at: new Date() }),
    );

  before(() => {
    home = mkdtempSync(join(tmpdir(), "cm-dead-writer-"));
    dataDir = join(home, "data");
    mkdirSync(dataDir);
    // A writer takes the folder's lock, then is killed: its lock file stays, naming its pid.
    lockHeldByDeadProcess(dataDir);
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  it("is judged gone by its lock, which names a pid that no longer runs", () => {
    assert.equal(dataDirHolderAlive(dataDir), false);
  });

  it("has a fresh status file that status no longer takes for a live run", () => {
    writeStatus();
    assert.equal(readFreshStatus(dataDir), undefined);
  });

  it("answers a request with nothing at once, not after the request's timeout", {
    timeout: 30_000,
  }, async () => {
    writeStatus();
    const reply = await sendLocalRequest(
      dataDir,
      { read: { command: "runs", limit: 1, json: false }, by: currentRequester() },
      600_000,
    );
    assert.equal(reply, undefined);
  });

  it("is told apart from a live holder: with the lock held here, the same file is a live run's", () => {
    rmSync(`${dataDir}.lock`);
    const lock = acquireDataDirLock(dataDir);
    try {
      writeStatus();
      assert.equal(dataDirHolderAlive(dataDir), true);
      assert.equal(readFreshStatus(dataDir)?.run_id, "r1");
    } finally {
      lock.release();
    }
  });
});
