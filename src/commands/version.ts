import type { CommandModule } from "yargs";
import { TOOL_VERSION } from "../version.ts";
import { exitCodesEpilogue } from "./exit-codes.ts";

/** `controls-migrate version`: the same as --version, for people who type it as a command. */
export const versionCommand: CommandModule = {
  command: "version",
  describe: "Print the version (the same as --version).",
  builder: (y) => y.epilogue(exitCodesEpilogue("version")),
  handler: () => {
    process.stdout.write(`${TOOL_VERSION}\n`);
  },
};
