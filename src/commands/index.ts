import type { CommandModule } from "yargs";
import { dbCommand } from "./db.ts";
import { sandboxCommand } from "./sandbox.ts";

// biome-ignore lint/suspicious/noExplicitAny: yargs command modules are heterogeneous by design
export const commands: CommandModule<any, any>[] = [dbCommand, sandboxCommand];
