/**
 * What the executor is given: the open resources of a run and the part of its options it reads.
 */
import type { Kysely } from "kysely";
import type { HoldConfig, PipelineConfig, PlatformConfig, SourceConfig } from "../../config.ts";
import type { Database } from "../../db/schema.ts";
import type { Logger } from "../../log.ts";
import type { PlatformClient } from "../../platform/index.ts";
import type { Progress } from "../steer/progress.ts";
import type { WaitPolicy } from "./platform-wait.ts";

/** The part of the pipeline's options the executor reads; the pipeline passes its own object. */
export interface ExecutorOptions {
  /**
   * reason_code and reason of the controls created; `limit`: at most this many actions (canary);
   * the throttle file and daily window that hold the writes.
   */
  readonly run: Pick<PipelineConfig, "reasonCode" | "reason" | "limit"> &
    Pick<HoldConfig, "throttleFile" | "pauseOutside">;
  readonly platform: Pick<PlatformConfig, "concurrency" | "rate">;
  /** The source relation, whose flags a pending create's re-read checks again before a send. */
  readonly source?: SourceConfig;
}

export interface ExecutorContext {
  readonly db: Kysely<Database>;
  readonly client: PlatformClient;
  readonly runId: string;
  readonly logger: Logger;
  readonly progress: Progress;
  readonly signal?: AbortSignal;
  readonly options: ExecutorOptions;
  /**
   * PGlite's data folder: the running writer keeps the local channel (status file, steering
   * requests) beside it, since no second process can open the database. Undefined on PostgreSQL.
   */
  readonly localChannelDir?: string;
  /**
   * Whether pending creates wait for the platform's own migration (issue 27): their re-read before
   * a send then reads the platform's legacy fields too. Absent (a revert): two-way.
   */
  readonly waitForPlatform?: WaitPolicy;
  /**
   * A revert: it deletes what its run created whatever the source flags say (it restores the state
   * before that run), so the restriction rule of prune does not apply to its deletes.
   */
  readonly undo?: boolean;
  /** Pending creates whose wait for the platform expired: read again right before each is sent. */
  readonly awaitedCreates?: ReadonlySet<number>;
}
