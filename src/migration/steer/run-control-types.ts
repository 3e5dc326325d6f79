/** The settings of a running writer's steering (`RunControl`) and what the executor sees of it. */
import type { Kysely } from "kysely";
import type { HoldConfig } from "../../config.ts";
import type { Database } from "../../db/schema.ts";
import type { Logger } from "../../log.ts";
import type { PlatformClient } from "../../platform/index.ts";
import type { WriteGate } from "../execute/write-gate.ts";
import type { LocalChannel } from "./local-channel.ts";

export interface RunControlSettings {
  readonly db: Kysely<Database>;
  readonly runId: string;
  readonly client: Pick<PlatformClient, "setRate" | "metrics">;
  readonly logger: Logger;
  /** The run's --rate, the write budget until a `set-rate`. */
  readonly rate: number;
  readonly concurrency: number;
  readonly hold: Pick<HoldConfig, "throttleFile" | "pauseOutside">;
  /** PGlite: the status file and request folder beside the data folder. */
  readonly channel?: LocalChannel;
  readonly now?: () => Date;
}

/** What the executor uses: the gate, and where it tells that writing began and an action ended. */
export interface ActionControl {
  readonly gate: WriteGate;
  /** The write budget in force now (requests/s): after a set-rate, or a 429's halving. */
  budget(): number;
  noteWritesStarted(): void;
  noteDone(): void;
}
