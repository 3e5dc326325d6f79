/**
 * The options-table kit, generic over its table: the row type and its schemas, the compiler of
 * flags > env > defaults, and the yargs rendering. The CLI's tables are built with it, and so is
 * the sandbox package's (through its one door, `packages/sandbox/src/shared.ts`). Imports no
 * other part of the tool than these three files.
 */
export * from "./option-def.ts";
export * from "./read-table.ts";
export { isLoopbackHost } from "./url-policy.ts";
export * from "./yargs-options.ts";
