/**
 * What `--help` needs of the configuration, and nothing more: the global options table and its
 * yargs rendering. Unlike `../config.ts` it brings no loader, so no zod (the table's schemas are
 * factories, built when a command reads its options).
 */
export { globalOptions } from "./options.ts";
export { helpWidth, withOptions } from "./yargs-options.ts";
