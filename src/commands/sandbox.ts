import type { CommandModule } from "yargs";

// Placeholder; replaced by the sandbox work.
export const sandboxCommand: CommandModule = {
  command: "sandbox",
  describe: "Run the local emulator of the platform interface.",
  handler: () => {
    throw new Error("sandbox: not implemented yet");
  },
};
