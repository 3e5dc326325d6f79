/**
 * `--resume ID` on plan/apply/reconcile: the run's recorded settings restored where this
 * invocation does not give them again (see `migration/run/run-settings.ts`), and the `Resume with:`
 * command a run prints, which works when pasted (on a terminal or not).
 */
import { type Argv, connectionFlags, givenRunSettings, type RunConfigs } from "../config.ts";
import type { DatabaseHandle } from "../db/connection/connect.ts";
import { getRun } from "../db/journal/run-queries.ts";
import { UserError } from "../errors.ts";
import {
  recordedSettings,
  restoreSettings,
  type SettingChange,
} from "../migration/run/run-settings.ts";

/**
 * The configs to resume with: the run's settings where not given again, the rate and concurrency
 * given anew (`changes`, recorded once the run is claimed). Another value of any other setting is
 * refused, naming both, before anything is read or sent. Not a resume, or no such run (the
 * pipeline names it): the configs as they are.
 */
export async function resumeConfigs(
  handle: DatabaseHandle,
  configs: RunConfigs,
  argv: Argv,
): Promise<{ configs: RunConfigs; changes: SettingChange[] }> {
  const id = configs.pipeline.resume;
  if (!id) return { configs, changes: [] };
  // A database without the tool's tables holds no run; the pipeline says so after migrating.
  const run = await getRun(handle.db, id).catch(() => undefined);
  if (!run) return { configs, changes: [] };
  const restored = restoreSettings(recordedSettings(run.options), configs, givenRunSettings(argv));
  if (restored.conflicts.length > 0) {
    throw new UserError(
      `--resume ${id}: the run keeps the settings it started with, and this invocation gives others: ${restored.conflicts.join("; ")}. Leave these flags (and their env vars) out to go on with the run's own; only --rate and --concurrency may change at resume. Nothing was read or sent; the run stays resumable.`,
    );
  }
  return { configs: restored.configs, changes: restored.changes };
}

const SAFE = /^[A-Za-z0-9_./:@%+=,-]+$/;

/** One word for a POSIX shell: as is when safe, else single-quoted. */
export function shellWord(word: string): string {
  return SAFE.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A database URL without its password (pasted, pg then reads PGPASSWORD or ~/.pgpass). */
function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = "";
    return u.toString();
  } catch {
    return url;
  }
}

/**
 * What follows `controls-migrate MODE --resume ID` in the `Resume with:` line: the connection
 * flags this invocation was given (env vars are not repeated, secrets never written: a database
 * URL loses its password, the client secret stays in its file or env var), then `--yes` if given,
 * else a shell comment saying how to add it.
 *
 * @example
 *   resumeFlags({ "api-url": "https://a", yes: true }, "apply") // " --api-url https://a --yes"
 */
export function resumeFlags(argv: Argv, mode: string): string {
  const words: string[] = [];
  for (const [flag, value] of connectionFlags(argv)) {
    words.push(`--${flag}`);
    if (value !== true)
      words.push(shellWord(flag === "database-url" ? withoutPassword(value) : value));
  }
  const flags = words.length > 0 ? ` ${words.join(" ")}` : "";
  if (argv.yes === true) return `${flags} --yes`;
  if (mode === "plan") return flags;
  return `${flags}  # add --yes to confirm without the prompt (needed off a terminal)`;
}
