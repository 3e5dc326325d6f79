/**
 * The options table, continued: reading only what changed since the last complete observation
 * (`plan --since-last`, `reconcile --since-last`, issue 55). Same rows, same rules as `options.ts`.
 */
import { booleanSchema, numberSchema, option, type SchemaFactory } from "./option-def.ts";

/** A boolean flag whose env var is spelled `true` or `false`. */
const envBooleanSchema: SchemaFactory<boolean> = (z) =>
  z.preprocess((v) => (v === "true" ? true : v === "false" ? false : v), booleanSchema(z));

/** plan and reconcile. */
export const sinceLastOptions = {
  sinceLast: option({
    flag: "since-last",
    env: "CONTROLS_SINCE_LAST",
    default: false,
    schema: envBooleanSchema,
    kind: "boolean",
    group: "run",
    help: "Read only what changed since the last complete read of this platform: the identities it lists with updated_at at or after that read's start (minus --since-margin-s), by id the identities whose findings need the platform (waits, contested, orphans, the tool's writes) and the candidates whose source row changed that no run observed; every other identity, a candidate whose source row changed included, keeps its last observed state (summary.json coverage.mode incremental, coverage.carried). The source is still read whole. With no earlier complete read, every --full-every-th run, and after a stale_incremental miss, the run reads everything and says why.",
  }),
  sinceMarginS: option({
    flag: "since-margin-s",
    env: "CONTROLS_SINCE_MARGIN_S",
    default: 300,
    schema: numberSchema({ whole: true, min: 0, max: 86_400 }),
    kind: "string",
    group: "run",
    help: "With --since-last: seconds taken off the last complete read's start for the updated_at bound, for clock skew between this machine's database and the platform.",
  }),
  fullEvery: option({
    flag: "full-every",
    env: "CONTROLS_FULL_EVERY",
    default: 7,
    schema: numberSchema({ whole: true, min: 1, max: 1000 }),
    kind: "string",
    group: "run",
    help: "With --since-last: every Nth run on a platform reads everything, and checks what the incremental runs since the last complete one concluded: an identity whose change they missed is a stale_incremental finding, and the next --since-last reads everything again. 1: every run is complete.",
  }),
} as const;
