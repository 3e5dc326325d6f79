/**
 * yargs options and help text generated from the options table. yargs only parses: it gets no
 * defaults (env vars sit between defaults and flags, see `load.ts`) and reads every value-taking
 * option as text, so that zod, not yargs, turns "abc" into a clear error.
 */
import type { Argv, Options } from "yargs";
import type { OptionDef, OptionTable } from "./option-def.ts";

/** The help line of an option: its help text and the env var that backs it. */
export function describeOption(def: OptionDef): string {
  const env = def.env
    ? ` [env ${def.env}]`
    : def.envLabel
      ? ` [env ${stripTicks(def.envLabel)}]`
      : "";
  return `${def.help}${env}`;
}

const stripTicks = (s: string) => s.replaceAll("`", "");

/** What --help shows as the default: the label, or the default itself (false is not shown). */
export function defaultShown(def: OptionDef): string | undefined {
  if (def.defaultLabel) return def.defaultLabel;
  if (def.default === undefined || def.default === false) return undefined;
  return String(def.default);
}

/**
 * The yargs options of a table, keyed by flag.
 *
 * @example
 *   yargs.options(yargsOptions(sourceOptions))
 */
export function yargsOptions(table: OptionTable): Record<string, Options> {
  const out: Record<string, Options> = {};
  for (const def of Object.values(table)) {
    const shown = defaultShown(def);
    out[def.flag] = {
      describe: describeOption(def),
      // A value-taking option gets no yargs type: with parse-numbers off (cli.ts) it arrives as
      // the text typed, and --help shows no misleading [string] tag on a number.
      ...(def.kind === "boolean" ? { type: "boolean" as const } : { requiresArg: true }),
      ...(def.choices ? { choices: [...def.choices] } : {}),
      // Only a flag can give it: yargs itself may demand it (and --help says so).
      ...(def.required && !def.env ? { demandOption: true } : {}),
      ...(shown !== undefined ? { defaultDescription: shown } : {}),
    };
  }
  return out;
}

/** Adds a table's options to a yargs instance under one heading of --help. */
export function withOptions<T>(y: Argv<T>, table: OptionTable, heading: string) {
  const options = yargsOptions(table);
  return y.options(options).group(Object.keys(options), heading);
}

/** Every flag of the given tables, for "Did you mean --api-url?". */
export function flagsOf(...tables: OptionTable[]): string[] {
  return tables.flatMap((t) => Object.values(t).map((d) => d.flag));
}

/**
 * How wide `--help` is drawn: the terminal's width, else `COLUMNS` (a pipe has no width; a user's
 * `COLUMNS=60 controls-migrate --help | less` means 60), else 100; 120 at most.
 *
 * @example
 *   helpWidth(undefined, { COLUMNS: "60" }) // 60
 */
export function helpWidth(
  terminalColumns: number | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): number {
  const fromEnv = Number.parseInt(env.COLUMNS ?? "", 10);
  const width = terminalColumns || (Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : 100);
  return Math.min(120, Math.max(40, width));
}
