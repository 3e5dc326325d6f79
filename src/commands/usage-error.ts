/**
 * What the CLI prints when yargs refuses the command line: the help of the level the user is at
 * when no command was named, a "Did you mean" for a mistyped flag, and with --json one JSON error
 * object on stdout. Everything exits 1.
 */
import { ExitCode } from "../errors.ts";
import { retiredCommandHint } from "./retired-commands.ts";

/** demandCommand messages: their failure prints the help of that level. */
export const NAME_A_COMMAND = "Name a command; see the list above.";
export const NAME_A_DB_COMMAND = "Name a db command: migrate or seed.";

/** Edit distance between two words (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** The tails of a flag after each of its dashes: `source-id-column` → `id-column`, `column`. */
const tails = (flag: string): string[] =>
  [...flag.matchAll(/-/g)].map((m) => flag.slice((m.index ?? 0) + 1));

/**
 * The known flag closest to a mistyped one, if it is close enough to be what was meant: a known
 * flag the typed one is the tail of (`id-column` for `source-id-column`, a prefix left off, the
 * shortest such flag), else the one within a small edit distance, else one whose tail is a typo
 * away (`id-colum`).
 *
 * @example
 *   closestFlag("api-ur", ["api-url", "token-url"]) // "api-url"
 *   closestFlag("id-column", ["source-id-column"]) // "source-id-column"
 *   closestFlag("id-colum", ["source-id-column"]) // "source-id-column"
 *   closestFlag("zzz", ["api-url"]) // undefined
 */
export function closestFlag(typed: string, known: readonly string[]): string | undefined {
  if (known.includes(typed)) return typed;
  const shortest = (flags: string[]) => flags.sort((a, b) => a.length - b.length)[0];
  const prefixed = shortest(known.filter((k) => k.endsWith(`-${typed}`)));
  if (prefixed !== undefined) return prefixed;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const k of known) {
    const d = distance(typed, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  if (bestDistance <= Math.max(2, Math.floor(typed.length / 3))) return best;
  return typed.length < 5
    ? undefined
    : shortest(known.filter((k) => tails(k).some((t) => distance(typed, t) <= 1)));
}

/** The flags a help text lists (`--api-url`, ...): the options valid where the user is. */
export function flagsInHelp(help: string): string[] {
  return [...new Set([...help.matchAll(/(?:^|\s)--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!))];
}

/**
 * Rewrites yargs' "Unknown argument(s): a, b" into one sentence per argument, with a suggestion
 * for a mistyped flag. `args` tells flags (typed with dashes) from stray words.
 *
 * @example
 *   explainUnknown("Unknown argument: api-ur", ["--api-ur", "x"], ["api-url"])
 *   // "Unknown argument --api-ur. Did you mean --api-url?"
 */
export function explainUnknown(
  message: string,
  args: readonly string[],
  known: readonly string[],
): string | undefined {
  const m = /^Unknown arguments?: (.+)$/.exec(message);
  if (!m) return undefined;
  const typed = new Set(args.map((a) => a.split("=")[0]));
  return m[1]!
    .split(", ")
    .map((name) => {
      const dashes = typed.has(`--${name}`) ? "--" : typed.has(`-${name}`) ? "-" : "";
      const near = dashes ? closestFlag(name, known) : undefined;
      return `Unknown argument ${dashes}${name}.${near ? ` Did you mean --${near}?` : ""}`;
    })
    .join("\n");
}

/**
 * yargs' "Missing required argument: x" with the flags typed that the command does not take, which
 * yargs leaves unsaid when a required one is missing: each with the flag it likely meant (a near
 * one, or the one missing when only one is).
 *
 * @example
 *   explainMissing("Missing required argument: identities", ["--identity-count", "10"], ["identities"])
 *   // "Missing required argument: identities\nUnknown argument --identity-count. Did you mean --identities?"
 */
export function explainMissing(
  message: string,
  args: readonly string[],
  known: readonly string[],
): string | undefined {
  const m = /^Missing required arguments?: (.+)$/.exec(message);
  if (!m) return undefined;
  const missing = m[1]!.split(", ");
  const unlisted = args
    .filter((a) => a.startsWith("--") && a.length > 2)
    .map((a) => a.slice(2).split("=")[0]!)
    .filter((n) => !known.includes(n) && !(n.startsWith("no-") && known.includes(n.slice(3))));
  if (unlisted.length === 0) return undefined;
  const lines = unlisted.map((name) => {
    const near = closestFlag(name, known) ?? (missing.length === 1 ? missing[0] : undefined);
    return `Unknown argument --${name}.${near ? ` Did you mean --${near}?` : ""}`;
  });
  return [message, ...lines].join("\n");
}

/**
 * yargs' recommendation alone ("Did you mean apply?") as a sentence that first says what is wrong.
 *
 * @example
 *   unknownCommand("Did you mean apply?", ["aply"]) // 'Unknown command "aply". Did you mean apply?'
 */
export function unknownCommand(message: string, args: readonly string[]): string | undefined {
  if (!/^Did you mean /.test(message)) return undefined;
  const typed = args.find((a) => !a.startsWith("-"));
  return `Unknown command${typed ? ` "${typed}"` : ""}. ${message}`;
}

/** The parts of a yargs instance the failure handler uses (the usage object yargs hands it). */
export interface HelpSource {
  showHelp(print: (help: string) => void): unknown;
}

/**
 * A retired command is refused before yargs parses, so that `sandbox --help` says where the
 * command went and exits 1 rather than printing the top-level help with exit 0.
 */
export function refuseRetired(args: readonly string[]): void {
  const message = retiredCommandHint(args);
  if (message === undefined) return;
  if (args.includes("--json")) {
    process.stdout.write(`${JSON.stringify({ error: { message, exit_code: ExitCode.failed } })}\n`);
  }
  process.stderr.write(`Error: ${message}\n`);
  process.exit(ExitCode.failed);
}

/**
 * The yargs `.fail()` handler. yargs' own parse errors are usage errors; any other error is a bug
 * and is rethrown.
 */
export function failUsage(
  args: readonly string[],
  msg: string | undefined,
  err: Error | undefined,
  y: HelpSource,
): never {
  if (err && err.name !== "YError") throw err;
  let help = "";
  y.showHelp((h) => {
    help = h;
  });
  const raw = msg ?? err?.message ?? "invalid command line";
  const message =
    retiredCommandHint(args) ??
    explainUnknown(raw, args, flagsInHelp(help)) ??
    explainMissing(raw, args, flagsInHelp(help)) ??
    unknownCommand(raw, args) ??
    raw;
  if (args.includes("--json")) {
    process.stdout.write(`${JSON.stringify({ error: { message, exit_code: ExitCode.failed } })}\n`);
  }
  if (raw === NAME_A_COMMAND || raw === NAME_A_DB_COMMAND) {
    process.stderr.write(`${help}\n\n${raw}\n`);
  } else {
    process.stderr.write(`Error: ${message}\nRun with --help for usage.\n`);
  }
  process.exit(ExitCode.failed);
}
