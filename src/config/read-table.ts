/**
 * Compiles one options table from flags, env vars and defaults, naming the flag or env var of
 * every problem. Generic over the table: the CLI's tables (`load.ts`) and the sandbox's own use it.
 */
import { z } from "zod";
import type { OptionDef, OptionTable, OptionValues, SchemaFactory } from "./option-def.ts";

export type Env = Readonly<Record<string, string | undefined>>;
export type Argv = Readonly<Record<string, unknown>>;

/** Where a value came from, as the user wrote it: `--batch-size` or `env CONTROLS_BATCH_SIZE`. */
type Origin = { readonly raw: unknown; readonly name: string };

function originOf(def: OptionDef, argv: Argv, env: Env): Origin | undefined {
  let fromFlag = argv[def.flag];
  // A repeated flag comes as an array: the last one wins, as on most command lines.
  if (Array.isArray(fromFlag)) fromFlag = fromFlag[fromFlag.length - 1];
  if (fromFlag !== undefined && fromFlag !== "") return { raw: fromFlag, name: `--${def.flag}` };
  const fromEnv = def.env ? env[def.env] : undefined;
  if (fromEnv !== undefined && fromEnv !== "") return { raw: fromEnv, name: `env ${def.env}` };
  return undefined;
}

const built = new WeakMap<SchemaFactory<unknown>, z.ZodType>();

/** An option's zod schema, built from its row's factory on first use and kept. */
export function schemaOf<T>(def: OptionDef<T>): z.ZodType<T> {
  let schema = built.get(def.schema);
  if (!schema) {
    schema = def.schema(z);
    built.set(def.schema, schema);
  }
  return schema as z.ZodType<T>;
}

/** How the user gave an option: `--rate` or `env CONTROLS_RATE` (undefined: the default). */
export function givenAs(def: OptionDef, argv: Argv, env: Env): string | undefined {
  return originOf(def, argv, env)?.name;
}

/** How to name a missing option: `--api-url (or env API_BASE_URL)`. */
export function optionName(def: OptionDef): string {
  return def.env ? `--${def.flag} (or env ${def.env})` : `--${def.flag}`;
}

/**
 * Compiles one table from flags, env vars and defaults. Problems are appended to `problems`, one
 * sentence each; the values of options with a problem are left undefined.
 *
 * @example
 *   const problems: string[] = [];
 *   const source = readTable(sourceOptions, { "batch-size": "500" }, process.env, problems);
 */
export function readTable<T extends OptionTable>(
  table: T,
  argv: Argv,
  env: Env,
  problems: string[],
): OptionValues<T> {
  const out: Record<string, unknown> = {};
  for (const [key, def] of Object.entries(table)) {
    const origin = originOf(def, argv, env);
    if (origin === undefined) {
      if (def.required) problems.push(`Missing ${optionName(def)}.`);
      out[key] = def.default;
      continue;
    }
    const parsed = schemaOf(def).safeParse(origin.raw);
    if (parsed.success) out[key] = parsed.data;
    else problems.push(`${origin.name} ${parsed.error.issues[0]?.message ?? "is invalid"}.`);
  }
  return Object.freeze(out) as OptionValues<T>;
}
