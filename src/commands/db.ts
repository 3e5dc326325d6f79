import type { CommandModule } from "yargs";

// Placeholder; replaced by the foundation work (db migrate, db seed).
export const dbCommand: CommandModule = {
  command: "db <action>",
  describe: "Manage the tool's database (migrate, seed).",
  handler: () => {
    throw new Error("db: not implemented yet");
  },
};
