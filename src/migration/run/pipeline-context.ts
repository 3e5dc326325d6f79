/**
 * What plan, apply and reconcile are given: one options object (the compiled configuration, passed
 * down as is to every stage) and the open resources they work with.
 */

import {
  type PipelineConfig,
  type PlatformConfig,
  RUN_SETTING_KEYS,
  RUN_SETTINGS,
  type SourceConfig,
} from "../../config.ts";
import type { DatabaseHandle } from "../../db/connection/connect.ts";
import type { RunMode } from "../../db/schema.ts";
import type { Logger } from "../../log.ts";
import type { PlatformClient } from "../../platform/index.ts";
import type { FindingsMemory } from "../classify/findings-stream-types.ts";
import type { ExecutorContext } from "../execute/executor.ts";
import { waitPolicy } from "../execute/platform-wait.ts";
import type { SinceLastSettings } from "../read/since-last.ts";
import type { ListingSettings, SnapshotContext } from "../read/snapshot.ts";
import type { Progress } from "../steer/progress.ts";
import type { ReadStageChannel } from "../steer/read-stage-channel.ts";
import { platformKey } from "./run-binding.ts";
import type { SettingChange } from "./run-settings.ts";

/** The run's options: the frozen config objects, never copied field by field. */
export interface PipelineOptions {
  readonly mode: RunMode;
  readonly run: PipelineConfig;
  readonly source: SourceConfig;
  readonly platform: PlatformConfig;
}

/** What the writes amount to, shown when asking for confirmation. */
export interface PendingWrites {
  readonly creates: number;
  readonly deletes: number;
}

export interface PipelineDeps {
  readonly handle: DatabaseHandle;
  readonly client: PlatformClient;
  readonly logger: Logger;
  readonly progress: Progress;
  readonly signal?: AbortSignal;
  /**
   * Asked once the writes are known, before any is sent. Resolves true to go ahead. The CLI wires
   * it to --yes or an interactive prompt.
   */
  readonly confirm: (writes: PendingWrites) => Promise<boolean>;
  /** Where the tool's tables live, secret-free (`postgres://user@host/db`, `pglite:.data/x`). */
  readonly databaseLabel?: string | Record<string, unknown>;
  /** Told the run's id as soon as it exists, so that a later failure can name it. */
  readonly onRunStarted?: (runId: string) => void;
  /** PGlite's data folder, beside which a writer keeps its local channel (status, steering). */
  readonly localChannelDir?: string;
  /** Serves that channel while the run is not writing (set by the pipeline once the run exists). */
  readonly readStage?: ReadStageChannel;
  /** A resume's new rate or concurrency (notice in the log, `settings_changed_at_resume`). */
  readonly settingChanges?: readonly SettingChange[];
  /** What `Resume with:` repeats after `--resume ID`: connection flags and --yes, never a secret. */
  readonly resumeFlags?: string;
  /** What the findings stream may hold in memory (its defaults unless a test bounds it lower). */
  readonly findingsMemory?: FindingsMemory;
}

/** The executor's view of a run. */
export function executorContext(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
): ExecutorContext {
  return {
    db: deps.handle.db,
    client: deps.client,
    runId,
    logger: deps.logger,
    progress: deps.progress,
    signal: deps.signal,
    options,
    waitForPlatform: waitPolicy(options.run.waitForPlatform, options.run.waitForPlatformS),
    ...(deps.localChannelDir ? { localChannelDir: deps.localChannelDir } : {}),
  };
}

/** The snapshot stage's view of a run. */
export function snapshotContext(
  deps: PipelineDeps,
  options: PipelineOptions,
  runId: string,
): SnapshotContext {
  return {
    db: deps.handle.db,
    client: deps.client,
    source: options.source,
    runId,
    logger: deps.logger,
    progress: deps.progress,
    listing: listingSettings(options),
    signal: deps.signal,
    serialDatabase: deps.handle.backend === "pglite",
    ...(deps.findingsMemory ? { findingsMemory: deps.findingsMemory } : {}),
  };
}

/** `--since-last`'s settings: the margin, how often a run reads whole, the platform as named. */
export function sinceLastSettings(options: PipelineOptions): SinceLastSettings {
  return {
    marginS: options.run.sinceMarginS,
    fullEvery: options.run.fullEvery,
    platform: platformKey(options.platform),
  };
}

/**
 * Listings read with the run's budget: at most --listing-parallelism cursors, and never more than
 * --concurrency, which bounds the requests in flight anyway.
 */
function listingSettings(options: PipelineOptions): ListingSettings {
  return {
    rate: options.platform.rate,
    maxParallel: Math.max(
      1,
      Math.min(options.run.listingParallelism, options.platform.concurrency),
    ),
    retryBaseMs: options.platform.retryBaseMs,
  };
}

/** The options recorded with a run (`runs.options`): everything but secrets. */
export function recordedOptions(
  deps: PipelineDeps,
  options: PipelineOptions,
): Record<string, unknown> {
  return {
    mode: options.mode,
    ...options.run,
    database: deps.databaseLabel ?? deps.handle.backend,
    api_url: options.platform.apiUrl,
    token_url: options.platform.tokenUrl,
    client_id: options.platform.clientId,
    // The run settings the platform config holds (rate, concurrency); the others are in `run`.
    ...platformSettings(options.platform),
    source: { ...options.source },
  };
}

/** The platform config's run settings (`config/run-settings-table.ts`), as a run records them. */
function platformSettings(platform: PlatformConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of RUN_SETTING_KEYS) {
    if (RUN_SETTINGS[key].in === "platform") out[key] = platform[key as keyof PlatformConfig];
  }
  return out;
}
