/**
 * The options table, continued: the settings of the commands that make synthetic data, `db seed`
 * (identities written into the source relation) and `demo` (a throwaway database seeded and run
 * against the sandbox). Same rows, same rules as `options.ts` and `command-options.ts`.
 */
import { booleanSchema, numberSchema, option } from "./option-def.ts";

/** `db seed`. */
export const seedOptions = {
  identities: option({
    flag: "identities",
    required: true,
    schema: numberSchema({ whole: true, min: 0, max: 100_000_000 }),
    kind: "string",
    group: "seed",
    help: "How many identities to write.",
  }),
  seed: option({
    flag: "seed",
    default: 1,
    schema: numberSchema({ whole: true }),
    kind: "string",
    group: "seed",
    help: "Generator seed; the same count and seed give the same rows (and the sandbox's identities).",
  }),
  withAnomalies: option({
    flag: "with-anomalies",
    default: false,
    schema: booleanSchema,
    kind: "boolean",
    group: "seed",
    help: "Also add a few rows of every bad kind (NULL id, duplicate id, NULL flag, non-UUID id, ...).",
  }),
  truncate: option({
    flag: "truncate",
    default: false,
    schema: booleanSchema,
    kind: "boolean",
    group: "seed",
    help: "Delete the relation's existing rows first (refused otherwise).",
  }),
} as const;

/** `demo`. */
export const demoOptions = {
  identities: option({
    flag: "identities",
    default: 10_000,
    schema: numberSchema({ whole: true, min: 1, max: 10_000_000 }),
    kind: "string",
    group: "demo",
    help: "Synthetic identities to seed.",
  }),
  seed: option({
    flag: "seed",
    default: 7,
    schema: numberSchema({ whole: true }),
    kind: "string",
    group: "demo",
    help: "Seed of the synthetic data.",
  }),
  keep: option({
    flag: "keep",
    default: false,
    schema: booleanSchema,
    kind: "boolean",
    group: "demo",
    help: "Keep the demo's throwaway database folder (.data/demo-*) instead of removing it.",
  }),
} as const;
