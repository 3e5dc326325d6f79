/** What a revert run is given and what it answers (`revert.ts`, `revert-claim.ts`). */
import type { HoldConfig, PlatformConfig, RevertConfig } from "../../config.ts";
import type { DatabaseHandle } from "../../db/connection/connect.ts";
import type { Logger } from "../../log.ts";
import type { PlatformClient } from "../../platform/index.ts";
import type { RunSummary } from "../../reports/summary.ts";
import type { Progress } from "../steer/progress.ts";

export interface RevertDeps {
  readonly handle: DatabaseHandle;
  /** Absent for a dry run, which sends nothing. */
  readonly client?: PlatformClient;
  readonly logger: Logger;
  readonly progress: Progress;
  readonly signal?: AbortSignal;
  readonly confirm: (writes: { creates: number; deletes: number }) => Promise<boolean>;
  /** PGlite's data folder: read commands ask this process through its local channel. */
  readonly localChannelDir?: string;
  readonly onRunStarted?: (runId: string) => void;
}

export interface RevertOptions {
  readonly ofRunId: string;
  readonly revert: RevertConfig & HoldConfig;
  readonly platform?: PlatformConfig;
  /** Where reports go (`--out`), else `reports/<run-id>/`. */
  readonly out?: string;
}

export interface RevertResult {
  readonly summary: RunSummary;
  readonly exitCode: number;
  readonly resumeCommand?: string;
}

/** The command that continues revert `revertId` of run `ofRunId`. */
export const revertResumeCommand = (ofRunId: string, revertId: string) =>
  `controls-migrate revert ${ofRunId} --resume ${revertId} --yes`;
