import type { Argv, CommandModule } from "yargs";
import { type Argv as ConfigArgv, loadShowConfig, showOptions, withOptions } from "../config.ts";
import { openDatabase } from "../db/connect.ts";
import { identityHistoryPage } from "../db/history-queries.ts";
import { ensureSchema } from "../db/migrate.ts";
import { getRun } from "../db/run-queries.ts";
import { ExitCode, UserError } from "../errors.ts";
import { renderIdentityHistory, renderIdentityHistoryJson } from "../reports/identity-history.ts";
import { runCommand } from "./run-command.ts";

/** Quotes an id for the "older runs" command line so that it can be pasted as printed. */
const shellQuote = (s: string) =>
  /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;

export const showCommand: CommandModule = {
  command: "show <identity-id>",
  describe:
    "Everything the tool knows about one identity, newest run first: source flags, controls observed on the platform, findings, actions with attempts, HTTP statuses, control ids and errors.",
  builder: (y: Argv) =>
    withOptions(
      y.positional("identity-id", {
        type: "string",
        describe: "The identity, exactly as in the source relation and on the platform.",
      }),
      showOptions,
      "Show:",
    )
      .example("$0 show 5b3c0e1e-8f7a-4c1e-9d2b-2f0c7a1d9e44", "Its history over the last 20 runs")
      .example("$0 show 5b3c0e1e-8f7a-4c1e-9d2b-2f0c7a1d9e44 --json", "The same as one JSON object")
      .example(
        "$0 show 5b3c0e1e-8f7a-4c1e-9d2b-2f0c7a1d9e44 --before 20261122-101500-ab12",
        "The runs before that one (the next page)",
      ),
  handler: (argv) =>
    runCommand(argv as ConfigArgv, async ({ global, logger, argv: a }) => {
      const { limit, before } = loadShowConfig(a);
      const identityId = String(a["identity-id"]);
      const handle = await openDatabase(global, logger);
      try {
        await ensureSchema(handle.db, logger);
        if (before && !(await getRun(handle.db, before))) {
          throw new UserError(
            `--before ${before}: no such run. List runs with: controls-migrate runs`,
          );
        }
        // One run more than shown tells whether older runs exist.
        const page = await identityHistoryPage(handle.db, identityId, before ?? null, limit + 1);
        const runs = page.slice(0, limit);
        const last = page.length > limit ? (runs[runs.length - 1]?.run_id ?? null) : null;
        process.stdout.write(
          global.json
            ? renderIdentityHistoryJson(identityId, runs, last)
            : renderIdentityHistory(
                identityId,
                runs,
                last && `controls-migrate show ${shellQuote(identityId)} --before ${last}`,
              ),
        );
        return ExitCode.ok;
      } finally {
        await handle.close();
      }
    }),
};
