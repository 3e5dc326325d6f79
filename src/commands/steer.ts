/**
 * `pause`, `continue` and `set-rate`: steer a running writer run from another terminal. On
 * PostgreSQL the change is written to the run's control row (migration 0003), which the run polls
 * four times a second, so it works from any machine that reaches the database; on PGlite it goes
 * through the local channel beside the data folder (`local-channel.ts`). Either way the running
 * process records it with the run (who, when, what) and acknowledges it.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Argv, CommandModule } from "yargs";
import {
  type Argv as ConfigArgv,
  type GlobalConfig,
  loadSetRate,
  setRateOptions,
  withOptions,
} from "../config.ts";
import { openDatabase } from "../db/connection/connect.ts";
import { ensureSchema } from "../db/connection/migrate.ts";
import {
  type ControlChange,
  currentRequester,
  getRunControl,
  requestRunControl,
} from "../db/journal/run-control-queries.ts";
import { getRun, latestRunningWriter } from "../db/journal/run-queries.ts";
import { WRITER_MODES } from "../db/schema.ts";
import { ExitCode, UserError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { readFreshStatus, sendLocalRequest } from "../migration/steer/local-channel.ts";
import { describeChange } from "../migration/steer/steering-words.ts";
import { exitCodesEpilogue } from "./exit-codes.ts";
import { type CommandContext, runCommand } from "./run-command.ts";

/** How long a command waits for the running process to say it applied the change. */
const ACK_WAIT_MS = 5_000;

const noRunning = (where: string) =>
  `No apply, reconcile or revert is running on ${where}. See the runs with: controls-migrate runs`;

/** PostgreSQL: record the change on the run's control row and wait for its acknowledgement. */
async function steerOnPostgres(
  global: GlobalConfig,
  logger: Logger,
  runId: string | undefined,
  change: ControlChange,
): Promise<string> {
  const handle = await openDatabase(global, logger);
  try {
    const db = handle.db;
    await ensureSchema(db, logger);
    const run = runId ? await getRun(db, runId) : await latestRunningWriter(db);
    if (!run) {
      throw new UserError(
        runId
          ? `No run "${runId}". List runs with: controls-migrate runs`
          : noRunning("this database"),
      );
    }
    if (!WRITER_MODES.includes(run.mode) || run.status !== "running") {
      throw new UserError(
        `Run ${run.id} is a ${run.status} ${run.mode}: only a running apply, reconcile or revert can be steered.`,
      );
    }
    const version = await requestRunControl(db, run.id, change, currentRequester());
    const deadline = Date.now() + ACK_WAIT_MS;
    while (Date.now() < deadline) {
      const row = await getRunControl(db, run.id);
      if (row && row.applied_version >= version) return describeChange(run.id, change);
      await sleep(200);
    }
    return `${describeChange(run.id, change)} Recorded, but run ${run.id} (pid ${run.pid} on ${run.host}) has not acknowledged it within ${ACK_WAIT_MS / 1000} s; it applies it at its next poll (see: controls-migrate status ${run.id}).`;
  } finally {
    await handle.close();
  }
}

/** PGlite: a request file beside the data folder, answered by the running writer. */
async function steerOnPglite(
  dataDir: string,
  runId: string | undefined,
  change: ControlChange,
): Promise<string> {
  // No live writer has written its status file lately: nothing would answer; say so at once.
  if (!readFreshStatus(dataDir)) throw new UserError(noRunning(`data folder ${dataDir}`));
  const reply = await sendLocalRequest(
    dataDir,
    { ...(runId ? { runId } : {}), change, by: currentRequester() },
    ACK_WAIT_MS,
  );
  if (!reply)
    throw new UserError(
      `${noRunning(`data folder ${dataDir}`)} (nothing answered within ${ACK_WAIT_MS / 1000} s).`,
    );
  if (!reply.ok) throw new UserError(reply.message);
  return reply.message;
}

async function steer(ctx: CommandContext, change: ControlChange, runId: string | undefined) {
  const { global, logger } = ctx;
  if (runId) ctx.noteRun(runId);
  const message = global.databaseUrl
    ? await steerOnPostgres(global, logger, runId, change)
    : await steerOnPglite(global.dataDir, runId, change);
  process.stderr.write(`${message}\n`);
  if (global.json)
    process.stdout.write(`${JSON.stringify({ run_id: runId ?? null, ...change, message })}\n`);
  return ExitCode.ok;
}

const runIdPositional = (y: Argv) =>
  y.positional("run-id", {
    type: "string",
    describe: "The run, as listed by `controls-migrate runs`; default: the one running.",
  });

const optionalRunId = (argv: ConfigArgv) =>
  argv["run-id"] === undefined ? undefined : String(argv["run-id"]);

/** `pause [RUN_ID]`. */
export const pauseCommand: CommandModule = {
  command: "pause [run-id]",
  describe:
    "Pause a running apply/reconcile/revert: within 2 s it sends no new write; requests in flight finish, heartbeat and status go on.",
  builder: (y: Argv) =>
    runIdPositional(y)
      .example("$0 pause", "Pause the run going on this database")
      .epilogue(exitCodesEpilogue("pause")),
  handler: (argv) =>
    runCommand(argv as ConfigArgv, (ctx) => steer(ctx, { kind: "pause" }, optionalRunId(ctx.argv))),
};

/** `continue [RUN_ID]`. */
export const continueCommand: CommandModule = {
  command: "continue [run-id]",
  describe: "Let a paused run write again.",
  builder: (y: Argv) =>
    runIdPositional(y)
      .example("$0 continue", "The run going on this database writes again")
      .epilogue(exitCodesEpilogue("continue")),
  handler: (argv) =>
    runCommand(argv as ConfigArgv, (ctx) =>
      steer(ctx, { kind: "continue" }, optionalRunId(ctx.argv)),
    ),
};

/** `set-rate [RUN_ID] N`: yargs cannot put an optional positional first, so both are read here. */
export const setRateCommand: CommandModule = {
  command: "set-rate <run-id-or-rate> [rate]",
  describe:
    "Change a running run's write budget (requests/s) within 2 s: `set-rate N` or `set-rate RUN_ID N`. Same ceiling as --rate.",
  builder: (y: Argv) =>
    withOptions(
      y
        .positional("run-id-or-rate", {
          type: "string",
          describe: "N, or the run id when N follows",
        })
        .positional("rate", { type: "string", describe: "N, requests/s" }),
      setRateOptions,
      "Set-rate:",
    )
      .example("$0 set-rate 5", "Slow the running run down to 5 writes/s")
      .example("$0 set-rate 20261122-101500-cd34 40", "Name the run")
      .epilogue(exitCodesEpilogue("set-rate")),
  handler: (argv) =>
    runCommand(argv as ConfigArgv, (ctx) => {
      const first = String(ctx.argv["run-id-or-rate"]);
      const second = ctx.argv.rate === undefined ? undefined : String(ctx.argv.rate);
      const [runId, raw] = second === undefined ? [undefined, first] : [first, second];
      const rate = loadSetRate(raw, ctx.argv);
      return steer(ctx, { kind: "set_rate", rate }, runId);
    }),
};
