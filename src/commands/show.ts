import type { Argv, CommandModule } from "yargs";
import { type Argv as ConfigArgv, loadShowConfig, showOptions, withOptions } from "../config.ts";
import { exitCodesEpilogue } from "./exit-codes.ts";
import { runReadCommand } from "./read-command.ts";
import { runCommand } from "./run-command.ts";

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
      )
      .epilogue(exitCodesEpilogue("show")),
  handler: (argv) =>
    runCommand(argv as ConfigArgv, ({ global, logger, argv: a }) => {
      const { limit, before } = loadShowConfig(a);
      return runReadCommand(global, logger, {
        command: "show",
        identityId: String(a["identity-id"]),
        limit,
        before: before ?? null,
        json: global.json,
      });
    }),
};
