import type { GlobalConfig, RunConfigs } from "../config.ts";
import type { DatabaseHandle } from "../db/connect.ts";
import type { RunMode } from "../db/schema.ts";
import type { Logger } from "../log.ts";
import { type PendingWrites, type PipelineResult, runPipeline } from "../migration/pipeline.ts";
import { createProgress } from "../migration/progress.ts";
import { createPlatformClient, READ_SCOPES, WRITE_SCOPES } from "../platform/index.ts";
import { postgresTarget } from "../secret.ts";

/** One plan, apply or reconcile, with what the CLI (or the demo) has opened and decided. */
export interface PipelineRequest {
  readonly mode: RunMode;
  readonly configs: RunConfigs;
  readonly global: GlobalConfig;
  readonly handle: DatabaseHandle;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  readonly confirm: (writes: PendingWrites) => Promise<boolean>;
  readonly onRunStarted?: (runId: string) => void;
}

/**
 * The pipeline wired to a platform client (read scopes for plan, write scopes otherwise) and to
 * progress on stderr. Shared by the plan/apply/reconcile commands and `demo`.
 *
 * @example
 *   const { summary, exitCode } = await runWiredPipeline({ mode: "plan", configs, global,
 *     handle, logger, signal, confirm: async () => true });
 */
export async function runWiredPipeline(r: PipelineRequest): Promise<PipelineResult> {
  const { platform, source, pipeline } = r.configs;
  r.logger.addSecret(platform.clientSecret.reveal());
  const client = createPlatformClient(platform, {
    scopes: r.mode === "plan" ? READ_SCOPES : WRITE_SCOPES,
    logger: r.logger,
    signal: r.signal,
  });
  try {
    return await runPipeline(
      {
        handle: r.handle,
        client,
        logger: r.logger,
        signal: r.signal,
        progress: createProgress({
          enabled: r.global.progress,
          logger: r.logger,
          signal: r.signal,
          // JSON logs are lines for a shipper: progress goes through the logger, never a bar.
          ...(r.global.logFormat === "json" ? { tty: false } : {}),
        }),
        confirm: r.confirm,
        databaseLabel: r.global.databaseUrl
          ? postgresTarget(r.global.databaseUrl)
          : `pglite:${r.global.dataDir}`,
        onRunStarted: r.onRunStarted,
        ...(r.global.databaseUrl ? {} : { localChannelDir: r.global.dataDir }),
      },
      { mode: r.mode, run: pipeline, source, platform },
    );
  } finally {
    await client.close();
  }
}
