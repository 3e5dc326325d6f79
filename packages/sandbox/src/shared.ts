/**
 * The sandbox's one door into the CLI package: the platform's facts and the synthetic identities
 * (`src/contract/index.ts`, which ships with the CLI), and the option-table row type with its
 * schemas and yargs rendering (`src/config/option-kit.ts`), so the sandbox's flags are declared
 * the way the CLI's are. Nothing else of the CLI is imported, and the CLI imports nothing of the
 * sandbox at run time (checked by `test/unit/repo.import-rules.test.ts`).
 */
export * from "../../../src/config/option-kit.ts";
export * from "../../../src/contract/index.ts";
