import type { GlobalConfig, RunConfigs } from "../config.ts";
import type { DatabaseHandle } from "../db/connection/connect.ts";
import type { RunMode } from "../db/schema.ts";
import type { Logger } from "../log.ts";
import type { FindingsMemory } from "../migration/classify/findings-stream-types.ts";
import { type PendingWrites, type PipelineResult, runPipeline } from "../migration/run/pipeline.ts";
import type { SettingChange } from "../migration/run/run-settings.ts";
import { createProgress } from "../migration/steer/progress.ts";
import { createPlatformClient, READ_SCOPES, WRITE_SCOPES } from "../platform/index.ts";
import { postgresTarget } from "../secret.ts";

/**
 * What a command has opened and decided for its runs: the settings, the database, the logger and
 * the cancel signal. The plan/apply/reconcile commands hold one for one run, `demo` one for three.
 */
export interface PipelineSession {
  readonly configs: RunConfigs;
  readonly global: GlobalConfig;
  readonly handle: DatabaseHandle;
  readonly logger: Logger;
  readonly signal: AbortSignal;
}

/** One plan, apply or reconcile of a session: how its writes are confirmed, who learns its id. */
export interface PipelineRun {
  readonly mode: RunMode;
  readonly confirm: (writes: PendingWrites) => Promise<boolean>;
  readonly onRunStarted?: (runId: string) => void;
  /** A resume's new rate or concurrency, recorded once the run is claimed. */
  readonly settingChanges?: readonly SettingChange[];
  /** What the `Resume with:` line repeats after `--resume ID` (connection flags, --yes). */
  readonly resumeFlags?: string;
  /** What the findings stream may hold in memory (tests bound it lower; the CLI never sets it). */
  readonly findingsMemory?: FindingsMemory;
}

/**
 * One run of the pipeline wired to a platform client (read scopes for plan, write scopes
 * otherwise) and to progress on stderr. Shared by the plan/apply/reconcile commands and `demo`.
 *
 * @example
 *   const session = { configs, global, handle, logger, signal };
 *   const { summary, exitCode } = await runWiredPipeline(session, {
 *     mode: "plan",
 *     confirm: async () => true,
 *   });
 */
export async function runWiredPipeline(
  s: PipelineSession,
  run: PipelineRun,
): Promise<PipelineResult> {
  const { configs, global, handle, logger, signal } = s;
  const { platform, source, pipeline } = configs;
  logger.addSecret(platform.clientSecret.reveal());
  const client = createPlatformClient(platform, {
    scopes: run.mode === "plan" ? READ_SCOPES : WRITE_SCOPES,
    logger,
    signal,
  });
  try {
    return await runPipeline(
      {
        handle,
        client,
        logger,
        signal,
        progress: createProgress({
          enabled: global.progress,
          logger,
          signal,
          // JSON logs are lines for a shipper: progress goes through the logger, never a bar.
          ...(global.logFormat === "json" ? { tty: false } : {}),
        }),
        confirm: run.confirm,
        databaseLabel: global.databaseUrl
          ? postgresTarget(global.databaseUrl)
          : `pglite:${global.dataDir}`,
        onRunStarted: run.onRunStarted,
        settingChanges: run.settingChanges ?? [],
        resumeFlags: run.resumeFlags ?? "",
        ...(run.findingsMemory ? { findingsMemory: run.findingsMemory } : {}),
        ...(global.databaseUrl ? {} : { localChannelDir: global.dataDir }),
      },
      { mode: run.mode, run: pipeline, source, platform },
    );
  } finally {
    await client.close();
  }
}
