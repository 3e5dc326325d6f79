/**
 * The shape of one row of the options table, and the zod schemas its rows use. A row says
 * everything about an option once: flag, env var, default, schema, group and help text.
 *
 * A row holds a schema *factory*, given the zod namespace when the option is first read
 * (`read-table.ts`): this file imports zod for its types only, so `--help`, which renders the
 * table without checking a value, loads no zod.
 */
import type { z } from "zod";
import { type DailyWindow, parseDailyWindow } from "../daily-window.ts";
import { isPostgresUrl, judgeEndpointUrl } from "./url-policy.ts";

/** Which commands an option belongs to; also the heading it is listed under in --help. */
export type OptionGroup =
  | "global"
  | "source"
  | "platform"
  | "run"
  | "write"
  | "hold"
  | "apply"
  | "reconcile"
  | "runs"
  | "show"
  | "revert"
  | "status"
  | "steer"
  | "seed"
  | "demo"
  | "sandbox";

/** One option. `T` is the compiled value's type. */
export interface OptionDef<T = unknown> {
  /** The flag without its dashes: `batch-size` for `--batch-size`. */
  readonly flag: string;
  /** The env var read when the flag is absent. */
  readonly env?: string;
  /** Used when neither flag nor env var is given; a typed value, never parsed. */
  readonly default?: T;
  /** Shown instead of the default in --help and README (`reports/<run-id>/`). */
  readonly defaultLabel?: string;
  /** Missing is an error that names the flag and the env var. */
  readonly required?: boolean;
  /**
   * Builds the zod schema that turns a raw value (flag or env text, or a typed value from code)
   * into `T`, or says why not. Called once, when the option is first read (`schemaOf`).
   */
  readonly schema: SchemaFactory<T>;
  /** How yargs reads the flag: booleans take no value, everything else exactly one. */
  readonly kind: "string" | "boolean";
  /** Offered in --help and completion. */
  readonly choices?: readonly string[];
  readonly group: OptionGroup;
  /** One or two sentences for --help and the README. */
  readonly help: string;
  /** README's env column when the value comes from elsewhere (the client secret). */
  readonly envLabel?: string;
}

/** Builds a zod schema from the zod namespace it is given (zod stays unloaded until then). */
export type SchemaFactory<T> = (zod: typeof z) => z.ZodType<T>;

/** An options table: config property name → option. */
// biome-ignore lint/suspicious/noExplicitAny: a table holds options of every value type
export type OptionTable = Readonly<Record<string, OptionDef<any>>>;

/** The compiled value of an option: never undefined when it has a default or is required. */
export type OptionValue<D> =
  D extends OptionDef<infer V>
    ? D extends { readonly default: unknown } | { readonly required: true }
      ? V
      : V | undefined
    : never;

/** The frozen object a table compiles to. */
export type OptionValues<T extends OptionTable> = { readonly [K in keyof T]: OptionValue<T[K]> };

/** Declares one option, keeping its value type and whether it always has a value. */
export function option<T>(
  def: OptionDef<T> & { readonly default: T },
): OptionDef<T> & { readonly default: T };
export function option<T>(
  def: OptionDef<T> & { readonly required: true },
): OptionDef<T> & { readonly required: true };
export function option<T>(def: OptionDef<T>): OptionDef<T>;
export function option<T>(def: OptionDef<T>): OptionDef<T> {
  return def;
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const WHOLE = /^[+-]?\d+$/;

const received = (input: unknown) => (typeof input === "string" ? `"${input}"` : String(input));

/**
 * A number from flag or env text (or a number from code), with bounds. Messages read after the
 * option's name: `--batch-size must be a whole number, got "abc"`.
 *
 * @example
 *   numberSchema({ whole: true, min: 1 })(z).parse("12") // 12
 */
export function numberSchema(rule: {
  whole?: boolean;
  min?: number;
  max?: number;
}): SchemaFactory<number> {
  return (z) => {
    const kind = rule.whole ? "a whole number" : "a number";
    const pattern = rule.whole ? WHOLE : NUMBER;
    let n = z.number({ error: (iss) => `must be ${kind}, got ${received(iss.input)}` });
    if (rule.whole) n = n.int({ error: (iss) => `must be ${kind}, got ${received(iss.input)}` });
    if (rule.min !== undefined) {
      const min = rule.min;
      n = n.min(min, { error: (iss) => `must be at least ${min}, got ${received(iss.input)}` });
    }
    if (rule.max !== undefined) {
      const max = rule.max;
      n = n.max(max, { error: (iss) => `must be at most ${max}, got ${received(iss.input)}` });
    }
    return z.preprocess(
      (v) => (typeof v === "string" && pattern.test(v.trim()) ? Number(v.trim()) : v),
      n,
    );
  };
}

/** One of a fixed set of words. */
export function choiceSchema<const C extends readonly [string, ...string[]]>(
  choices: C,
): SchemaFactory<C[number]> {
  return (z) =>
    z.enum(choices, {
      error: (iss) => `must be one of ${choices.join(", ")}, got ${received(iss.input)}`,
    });
}

/** Non-empty text. */
export const textSchema: SchemaFactory<string> = (z) => z.string().min(1, "must not be empty");

/** A flag that takes no value. */
export const booleanSchema: SchemaFactory<boolean> = (z) =>
  z.boolean({ error: (iss) => `must be true or false, got ${received(iss.input)}` });

/** An endpoint URL under the URL policy (https, or http on loopback), without a trailing slash. */
export const endpointUrlSchema: SchemaFactory<string> = (z) =>
  z.string().transform((value, ctx) => {
    const verdict = judgeEndpointUrl(value);
    if ("url" in verdict) return verdict.url;
    ctx.addIssue({ code: "custom", message: verdict.problem, input: value });
    return z.NEVER;
  });

/** A PostgreSQL connection URL. */
export const postgresUrlSchema: SchemaFactory<string> = (z) =>
  z.string().refine(isPostgresUrl, "must start with postgres:// or postgresql://");

/** A daily window of local time, `HH:MM-HH:MM` (may wrap past midnight). */
export const dailyWindowSchema: SchemaFactory<DailyWindow> = (z) =>
  z.string().transform((value, ctx): DailyWindow => {
    const parsed = parseDailyWindow(value);
    if (typeof parsed === "object") return parsed;
    ctx.addIssue({ code: "custom", message: parsed, input: value });
    return z.NEVER;
  });
