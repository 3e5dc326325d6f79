import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import { runCli } from "../helpers/cli.ts";
import { type CliRig, startCliRig } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { spawnInTty } from "../helpers/tty.ts";
import { waitFor } from "../helpers/wait-for.ts";

const N = 400;
const SEED = 9;
const creates = [...syntheticIdentities(N, SEED)].filter((r) => r.user_disabled).length;
const BAR = /[█░]/;

/** The terminal's last non-empty line. */
const lastLine = (output: string) =>
  output
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1);

// Terminal behaviour does not depend on the database: PGlite is enough here.
describe("apply at a terminal", () => {
  let rig: CliRig;
  let sandbox: Sandbox;
  let target: TestTarget;
  let env: Record<string, string>;

  const runStatus = async (runId: string) => {
    const h = await target.open();
    try {
      const run = await h.db
        .selectFrom(TOOL_TABLES.runs)
        .select(["status", "error"])
        .where("id", "=", runId)
        .executeTakeFirstOrThrow();
      const actions = await h.db
        .selectFrom(TOOL_TABLES.actions)
        .select(["status", "outcome"])
        .where("run_id", "=", runId)
        .execute();
      return { ...run, actions };
    } finally {
      await h.close();
    }
  };
  /** The next apply is not refused with "Resume it first": a one-action canary goes through. */
  const nextApplyStartsCleanly = async () => {
    const r = await runCli(
      ["apply", "--limit", "1", "--yes", "--no-progress", ...target.args],
      env,
    );
    assert.equal(r.code, 0, r.stderr);
  };

  before(async () => {
    rig = await startCliRig(backends[0]!, { identities: N, seed: SEED });
    ({ sandbox, target, env } = rig);
  });
  after(() => rig.close());

  it("names what, where and as whom at the prompt; any answer but yes closes the run as declined", async () => {
    const t = spawnInTty(["apply", "--no-progress", ...target.args], { env });
    await t.waitFor(/Type "yes" to go ahead: /);
    const question = `apply will create ${creates} SELL_ONLY client controls on ${sandbox.apiUrl} as client ${sandbox.credentials.clientId}. Type "yes" to go ahead: `;
    assert.ok(t.output().includes(question), t.output());
    t.type("no\r");
    const { code, output } = await t.done;
    assert.equal(code, 1, output);
    assert.match(output, /Not confirmed: nothing was written; run \S+ is closed as declined/);
    const runId = /Run (\S+) \(apply\) started/.exec(output)?.[1];
    assert.ok(runId);
    const run = await runStatus(runId);
    assert.equal(run.status, "declined");
    assert.equal(run.actions.length, creates, "the declined run journaled its planned creates");
    assert.ok(run.actions.every((a) => a.status === "skipped" && a.outcome === "declined"));
    assert.equal(sandbox.stats().writes.creates, 0, "nothing was written");
    await nextApplyStartsCleanly();
  });

  it("Ctrl-C at the prompt exits 130, closes the run as declined, and the next apply starts cleanly", async () => {
    const written = sandbox.stats().writes.creates;
    const t = spawnInTty(["apply", "--no-progress", ...target.args], { env });
    await t.waitFor(/Type "yes" to go ahead: /);
    t.type("\x03");
    const { code, output } = await t.done;
    assert.equal(code, 130, output);
    assert.match(output, /Interrupted at the confirmation: nothing was written/);
    const runId = /Run (\S+) \(apply\) started/.exec(output)?.[1];
    assert.ok(runId);
    assert.equal((await runStatus(runId)).status, "declined");
    assert.equal(sandbox.stats().writes.creates, written, "nothing was written");
    await nextApplyStartsCleanly();
  });

  it("Ctrl-C mid-apply stops the bar first, ends with the resume command, and keeps unsent actions pending", async () => {
    // A slow budget keeps several actions claimed and waiting for their turn when Ctrl-C comes.
    const t = spawnInTty(["apply", "--yes", "--rate", "4", "--concurrency", "8", ...target.args], {
      env,
    });
    const written = sandbox.stats().writes.creates;
    await t.waitFor(/apply\s+.*[█░]/);
    await waitFor("4 creates", () => sandbox.stats().writes.creates >= written + 4);
    t.type("\x03");
    const { code, output } = await t.done;
    assert.equal(code, 130, output);
    const runId = /Run (\S+) \(apply\) started/.exec(output)?.[1];
    assert.ok(runId);
    // A command that works when pasted: the connection flags given (not env vars), and --yes.
    assert.equal(
      lastLine(output),
      `Resume with: controls-migrate apply --resume ${runId} ${target.args.join(" ")} --yes`,
    );
    const lines = output.split("\n");
    const signalAt = lines.findIndex((l) => l.includes("SIGINT received"));
    assert.ok(signalAt > 0, output);
    assert.deepEqual(
      lines.slice(signalAt).filter((l) => BAR.test(l)),
      [],
      "no bar is drawn on or after the interruption message",
    );

    const run = await runStatus(runId);
    const count = (s: string) => run.actions.filter((a) => a.status === s).length;
    assert.equal(count("in_flight"), 0);
    assert.ok(count("pending") > 0, "actions not sent are pending");
    // Only a request already on the wire may be in doubt; those waiting for the budget are not.
    assert.ok(count("ambiguous") <= 1, `ambiguous: ${count("ambiguous")}`);

    const resumed = await runCli(
      ["apply", "--resume", runId, "--yes", "--no-progress", ...target.args],
      env,
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(sandbox.stats().writes.creates, creates);
    assert.equal(sandbox.stats().integrity.identitiesWithDuplicateClientSellOnly, 0);
  });
});
