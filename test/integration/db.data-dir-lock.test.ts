/**
 * The embedded database's data-folder lock: one holder, always. Contenders are real processes
 * (a pid names a process), racing from the same millisecond.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { loadGlobalConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/connection/connect.ts";
import { acquireDataDirLock } from "../../src/db/connection/data-dir-lock.ts";
import { createLogger } from "../../src/log.ts";
import { REPO_ROOT } from "../helpers/cli.ts";
import { waitFor } from "../helpers/wait-for.ts";

/**
 * The pid of a process that has already exited: `node --version`, which exits before starting
 * JavaScript (about 0 ms of CPU against 70 ms for `node -e ""`, 50 times a run of the race).
 */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["--version"]);
  assert.equal(r.status, 0, "the dead-pid process ran and exited");
  return r.pid!;
}

/** A lock file written by a holder in another pid namespace (another container), `ageS` old. */
function foreignLock(path: string, ageS: number): void {
  writeFileSync(
    path,
    `${JSON.stringify({ token: `foreign${Date.now()}`, pid: 1, host: "other-container", ns: "another-kernel/pid:[1]" })}\n`,
  );
  const at = new Date(Date.now() - ageS * 1000);
  utimesSync(path, at, at);
}

interface Contender {
  readonly child: ChildProcess;
  readonly lines: Interface;
  next(): Promise<string>;
  send(line: string): void;
}

/** The contender: a helper script of the suite, run from its source. */
const CONTENDER = [join(REPO_ROOT, "test/helpers/lock-contender.ts")];

function contender(): Contender {
  const child = spawn(process.execPath, CONTENDER, {
    cwd: REPO_ROOT,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! });
  const queue: string[] = [];
  const waiters: ((l: string) => void)[] = [];
  lines.on("line", (l) => {
    const w = waiters.shift();
    if (w) w(l);
    else queue.push(l);
  });
  return {
    child,
    lines,
    next: () =>
      queue.length > 0
        ? Promise.resolve(queue.shift()!)
        : new Promise<string>((r) => waiters.push(r)),
    send: (line) => child.stdin!.write(`${line}\n`),
  };
}

describe("data-folder lock", { timeout: 180_000 }, () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), "cm-lock-"));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("with a dead holder in the lock file and three processes starting in the same millisecond, 100 trials never end with two holders", async () => {
    const contenders = [contender(), contender(), contender()];
    try {
      for (const c of contenders) assert.equal(await c.next(), "ready");
      const doubles: string[] = [];
      const nobody: string[] = [];
      for (let trial = 0; trial < 100; trial++) {
        const dir = join(root, `race-${trial}`);
        // Half the trials: an older version's lock naming a dead pid of this machine. The other
        // half: a holder in another container whose lock file stopped being refreshed.
        if (trial % 2 === 0) writeFileSync(`${dir}.lock`, `${deadPid()}\n`);
        else foreignLock(`${dir}.lock`, 120);
        const start = Date.now() + 40;
        for (const c of contenders) c.send(`try ${dir} ${start}`);
        const answers = await Promise.all(contenders.map((c) => c.next()));
        const holders = contenders.filter((_, i) => answers[i] === "held");
        if (holders.length > 1) doubles.push(`trial ${trial}: ${answers.join(" | ")}`);
        if (holders.length === 0) nobody.push(`trial ${trial}: ${answers.join(" | ")}`);
        for (const c of holders) {
          c.send("release");
          assert.equal(await c.next(), "released");
        }
      }
      assert.deepEqual(doubles, [], "never two holders");
      assert.deepEqual(nobody, [], "an abandoned lock is always taken over by someone");
    } finally {
      for (const c of contenders) {
        c.send("exit");
        c.child.stdin!.end();
      }
    }
  });

  it("an opening waits for a data folder another process holds for a moment (a status reading it), and opens it once let go, rather than refuse", async () => {
    const dataDir = join(root, "held-a-moment");
    const holder = contender();
    try {
      assert.equal(await holder.next(), "ready");
      holder.send(`try ${dataDir} ${Date.now()}`);
      assert.equal(await holder.next(), "held");
      const said: string[] = [];
      const logger = createLogger({ level: "info", write: (line) => said.push(line) });
      const global = { ...loadGlobalConfig({}, {}), dataDir };
      const opening = openDatabase(global, logger);
      await waitFor("the opening waiting", () => said.some((l) => /waiting up to 5 s/.test(l)));
      assert.match(said.join(""), /is in use by another process \(pid \d+ on /);
      holder.send("release");
      assert.equal(await holder.next(), "released");
      const handle = await opening;
      await handle.close();
    } finally {
      holder.send("exit");
      holder.child.stdin!.end();
    }
  });

  it("a holder in another container is not taken over while it keeps its lock file fresh, even with a pid that means nothing here", () => {
    const dir = join(root, "fresh-foreign");
    foreignLock(`${dir}.lock`, 2);
    assert.throws(
      () => acquireDataDirLock(dir),
      /in use by another process \(pid 1 on other-container; its lock was refreshed \d+ s ago\)/,
    );
  });

  it("a data folder in use does not send the user to another --data-dir, which would know nothing of the first one's runs", () => {
    const dir = join(root, "no-walk-around");
    foreignLock(`${dir}.lock`, 2);
    assert.throws(
      () => acquireDataDirLock(dir),
      (err: Error) =>
        !/choose another --data-dir/.test(err.message) &&
        /never point a second writer at the same platform/.test(err.message),
    );
  });

  it("a holder whose lock file was not refreshed for longer than the stale age is taken over", () => {
    const dir = join(root, "stale-foreign");
    foreignLock(`${dir}.lock`, 5);
    const lock = acquireDataDirLock(dir, { staleMs: 3_000 });
    assert.equal(JSON.parse(readFileSync(`${dir}.lock`, "utf8")).pid, process.pid);
    lock.release();
  });

  it("the holder keeps its lock file fresh: its mtime moves forward on every beat", async () => {
    const dir = join(root, "heartbeat");
    const lock = acquireDataDirLock(dir, { updateMs: 50 });
    try {
      const old = new Date(Date.now() - 60_000);
      utimesSync(`${dir}.lock`, old, old);
      await waitFor("the next beat", () => statSync(`${dir}.lock`).mtimeMs > old.getTime());
      assert.ok(statSync(`${dir}.lock`).mtimeMs >= old.getTime() + 60_000 - 1, "set to now");
    } finally {
      lock.release();
    }
  });

  it("a holder that finds its lock taken over says so at its next beat", async () => {
    const dir = join(root, "compromised");
    let reported: Error | undefined;
    const lock = acquireDataDirLock(dir, {
      updateMs: 50,
      onCompromised: (err) => {
        reported = err;
      },
    });
    foreignLock(`${dir}.lock`, 0);
    await waitFor("the holder's report", () => reported !== undefined);
    assert.match(String(reported?.message), /was taken over by another process/);
    lock.release();
    assert.ok(
      readFileSync(`${dir}.lock`, "utf8").includes("other-container"),
      "release leaves the new holder's lock alone",
    );
  });
});
