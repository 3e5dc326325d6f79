/**
 * README's exit-code table, its "commands" column written from `COMMAND_EXIT_CODES`
 * (`npm run docs:exit-codes`): the table lists every code, and says which commands return each,
 * as their `--help` does. The meanings stay README's own prose.
 */
import type { ExitCode } from "../errors.ts";
import { commandsReturning, EXIT_CODES } from "./exit-codes.ts";

const HEADER = "| code | commands | meaning |";
const ROW = /^\| (\d+) \| ([^|]*) \| (.*)$/;

/**
 * README with its exit-code table's "commands" column rewritten; throws when the table is missing,
 * or a code has no row (README must say what it means) or a row names no code that exists.
 *
 * @example
 *   withExitCodeColumn("| code | commands | meaning |\n|---|---|---|\n| 0 | x | done |\n...")
 */
export function withExitCodeColumn(readme: string): string {
  const lines = readme.split("\n");
  const start = lines.indexOf(HEADER);
  if (start < 0) throw new Error(`README has no exit-code table (header ${HEADER})`);
  const seen: number[] = [];
  for (let i = start + 2; i < lines.length && lines[i]!.startsWith("|"); i++) {
    const m = ROW.exec(lines[i]!);
    if (!m) throw new Error(`README's exit-code table: row ${i + 1} is not "| code | ... |"`);
    const code = Number(m[1]) as ExitCode;
    if (!EXIT_CODES.includes(code)) throw new Error(`README's exit-code table names ${code}`);
    seen.push(code);
    lines[i] = `| ${code} | ${commandsReturning(code)} | ${m[3]}`;
  }
  const missing = EXIT_CODES.filter((c) => !seen.includes(c));
  if (missing.length > 0) {
    throw new Error(`README's exit-code table has no row for ${missing.join(", ")}`);
  }
  return lines.join("\n");
}
