/**
 * The loaders of the commands that steer or undo a run: `revert`, `status` and `set-rate`. Same
 * table-driven reading as `load.ts`; every problem is reported at once.
 */
import {
  holdOptions,
  revertOptions,
  runOptions,
  setRateOptions,
  statusOptions,
  writeOptions,
} from "./command-options.ts";
import {
  type Argv,
  type Env,
  load,
  type PlatformConfig,
  rateCeilingProblem,
  readPlatform,
  readTable,
  refuseProblems,
} from "./load.ts";
import type { OptionValues } from "./option-def.ts";
import { platformOptions } from "./options.ts";
import { schemaOf } from "./read-table.ts";

export type RevertConfig = OptionValues<typeof revertTable>;
export type StatusConfig = OptionValues<typeof statusOptions>;

const revertTable = {
  out: runOptions.out,
  yes: writeOptions.yes,
  resume: writeOptions.resume,
  reasonCode: writeOptions.reasonCode,
  ...holdOptions,
  ...revertOptions,
};

/** What `revert` needs: its options, and the platform's unless it is a dry run. */
export interface RevertConfigs {
  readonly revert: RevertConfig;
  /** Absent for `--dry-run`, which reads only the journal. */
  readonly platform?: PlatformConfig;
}

/**
 * `revert RUN_ID`: its options and, unless `--dry-run`, the platform's, every problem at once.
 *
 * @example
 *   const { revert, platform } = loadRevertConfigs({ "dry-run": true }); // platform undefined
 */
export function loadRevertConfigs(argv: Argv, env: Env = process.env): RevertConfigs {
  const problems: string[] = [];
  const revert = readTable(revertTable, argv, env, problems);
  const platform = revert.dryRun ? undefined : readPlatform(argv, env, problems);
  refuseProblems(problems);
  return platform ? { revert, platform } : { revert };
}

/**
 * `status`: whether to keep watching.
 *
 * @example
 *   loadStatusConfig({ watch: true }).watch // true
 */
export function loadStatusConfig(argv: Argv, env: Env = process.env): StatusConfig {
  return load(statusOptions, argv, env);
}

/**
 * The rate `set-rate` asks for: a number as --rate takes, under the same ceiling.
 *
 * @example
 *   loadSetRate("5", {}) // 5
 *   loadSetRate("80", {}) // throws: above the platform's limit of 50 ...
 */
export function loadSetRate(raw: unknown, argv: Argv, env: Env = process.env): number {
  const problems: string[] = [];
  const { allowRateAboveLimit } = readTable(setRateOptions, argv, env, problems);
  const parsed = schemaOf(platformOptions.rate).safeParse(raw);
  if (!parsed.success) {
    problems.push(`The rate ${parsed.error.issues[0]?.message ?? "is invalid"} (requests/s).`);
  } else {
    const ceiling = rateCeilingProblem(parsed.data, allowRateAboveLimit, "set-rate");
    if (ceiling) problems.push(ceiling);
  }
  refuseProblems(problems);
  return parsed.data as number;
}
