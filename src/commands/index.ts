import type { CommandModule } from "yargs";
import { dbCommand } from "./db.ts";
import { discardCommand } from "./discard.ts";
import { applyCommand, planCommand, reconcileCommand } from "./pipeline-commands.ts";
import { revertCommand } from "./revert.ts";
import { reportCommand, runsCommand } from "./runs.ts";
import { showCommand } from "./show.ts";
import { statusCommand } from "./status.ts";
import { continueCommand, pauseCommand, setRateCommand } from "./steer.ts";
import { versionCommand } from "./version.ts";

// biome-ignore lint/suspicious/noExplicitAny: yargs command modules are heterogeneous by design
export const commands: CommandModule<any, any>[] = [
  planCommand,
  applyCommand,
  reconcileCommand,
  discardCommand,
  statusCommand,
  pauseCommand,
  continueCommand,
  setRateCommand,
  revertCommand,
  reportCommand,
  runsCommand,
  showCommand,
  dbCommand,
  versionCommand,
];
