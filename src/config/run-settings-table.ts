/**
 * The settings a run is bound to (issue 26 §2), each written once here: the option that sets it
 * (flag, env var, help: the options table), the config object that holds it, whether a resume may
 * change it, whether every run records it, and the shape a recorded value must have. Which of them
 * an invocation gave is read from this table (`given-options.ts`); a run records, restores and
 * compares them by it (`migration/run/run-settings.ts`). A new resumable setting is one entry.
 */
import { z } from "zod";
import {
  applyOptions,
  holdOptions,
  reconcileOptions,
  runOptions,
  writeOptions,
} from "./command-options.ts";
import type { OptionDef } from "./option-def.ts";
import { platformOptions } from "./options.ts";

interface RunSetting {
  readonly option: OptionDef;
  /** The config object that holds it: `configs.platform` or `configs.pipeline`. */
  readonly in: "platform" | "pipeline";
  /** Given anew at resume it changes the run (as `set-rate` does); otherwise it is refused. */
  readonly changeable: boolean;
  /** Every run records it (it has a default): a run without it is an older version's. */
  readonly always?: true;
  /** How messages name it, when not `--flag`. */
  readonly label?: string;
  /** A recorded value of another shape (hand-edited, an older version's) is dropped. */
  readonly recorded: z.ZodType;
}

export const RUN_SETTINGS = {
  rate: {
    option: platformOptions.rate,
    in: "platform",
    changeable: true,
    always: true,
    recorded: z.number().positive(),
  },
  concurrency: {
    option: platformOptions.concurrency,
    in: "platform",
    changeable: true,
    always: true,
    recorded: z.number().int().positive(),
  },
  state: {
    option: runOptions.state,
    in: "pipeline",
    changeable: false,
    recorded: z.enum(["auto", "bulk", "filtered", "per-identity"]),
  },
  limit: {
    option: applyOptions.limit,
    in: "pipeline",
    changeable: false,
    recorded: z.number().int().nonnegative(),
  },
  pauseOutside: {
    option: holdOptions.pauseOutside,
    in: "pipeline",
    changeable: false,
    recorded: z.string(),
  },
  throttleFile: {
    option: holdOptions.throttleFile,
    in: "pipeline",
    changeable: false,
    recorded: z.string(),
  },
  reason: { option: writeOptions.reason, in: "pipeline", changeable: false, recorded: z.string() },
  reasonCode: {
    option: writeOptions.reasonCode,
    in: "pipeline",
    changeable: false,
    recorded: z.string(),
  },
  prune: {
    option: reconcileOptions.prune,
    in: "pipeline",
    changeable: false,
    recorded: z.boolean(),
  },
  // Which creates are sent: another wait half-way would change what the run means.
  waitForPlatform: {
    option: runOptions.waitForPlatform,
    in: "pipeline",
    changeable: false,
    always: true,
    label: "--wait-for-platform (--no-wait-for-platform)",
    recorded: z.boolean(),
  },
  waitForPlatformS: {
    option: runOptions.waitForPlatformS,
    in: "pipeline",
    changeable: false,
    recorded: z.number().nonnegative(),
  },
} as const satisfies Record<string, RunSetting>;

export type RunSettingKey = keyof typeof RUN_SETTINGS;
export const RUN_SETTING_KEYS = Object.keys(RUN_SETTINGS) as RunSettingKey[];

/** The settings as a run records them; a key absent was not set (undefined is not stored). */
export type RecordedSettings = {
  -readonly [K in RunSettingKey]?: z.infer<(typeof RUN_SETTINGS)[K]["recorded"]>;
};

/**
 * How messages name a setting: its flag, or its label.
 *
 * @example
 *   runSettingFlag("rate") // "--rate"
 */
export const runSettingFlag = (key: RunSettingKey): string => {
  const s: RunSetting = RUN_SETTINGS[key];
  return s.label ?? `--${s.option.flag}`;
};
