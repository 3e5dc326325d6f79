/**
 * Which options an invocation gave (by flag or env var) rather than left to their defaults: a
 * resume restores the run's settings only where they were not given again, and its `Resume with:`
 * line repeats only what was given as a flag (env vars are still set where it is pasted).
 */
import { runOptions } from "./command-options.ts";
import type { OptionDef } from "./option-def.ts";
import { globalOptions, platformOptions, sourceOptions } from "./options.ts";
import { type Argv, type Env, givenAs } from "./read-table.ts";
import { RUN_SETTING_KEYS, RUN_SETTINGS, type RunSettingKey } from "./run-settings-table.ts";

/**
 * The run settings this invocation gave, by flag or env var.
 *
 * @example
 *   givenRunSettings({ rate: "5" }, {}) // Set { "rate" }
 */
export function givenRunSettings(argv: Argv, env: Env = process.env): Set<RunSettingKey> {
  const out = new Set<RunSettingKey>();
  for (const key of RUN_SETTING_KEYS) {
    if (givenAs(RUN_SETTINGS[key].option, argv, env) !== undefined) out.add(key);
  }
  return out;
}

/** Where the run connects: what a pasted resume command needs again when given as flags. */
const CONNECTION: readonly OptionDef[] = [
  globalOptions.databaseUrl,
  globalOptions.dataDir,
  platformOptions.apiUrl,
  platformOptions.tokenUrl,
  platformOptions.clientId,
  platformOptions.clientSecretFile,
  platformOptions.allowRateAboveLimit,
  ...Object.values(sourceOptions),
  runOptions.out,
];

/**
 * The connection options given as flags (not env vars), as `[flag, value]` pairs in the order of
 * the table; a boolean given true has the value `true`.
 *
 * @example
 *   connectionFlags({ "api-url": "https://a", "data-dir": "d" }) // [["data-dir","d"],["api-url","https://a"]]
 */
export function connectionFlags(argv: Argv): [string, string | true][] {
  const out: [string, string | true][] = [];
  for (const def of CONNECTION) {
    if (!givenAs(def, argv, {})) continue;
    let value = argv[def.flag];
    if (Array.isArray(value)) value = value[value.length - 1];
    if (value === true) out.push([def.flag, true]);
    else if (value !== false) out.push([def.flag, String(value)]);
  }
  return out;
}
