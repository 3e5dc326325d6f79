/**
 * The options table, continued: settings of one command or a few (plan/apply/reconcile runs,
 * `runs`). `db seed` and `demo` are in
 * `seed-demo-options.ts`. Same rows, same rules as `options.ts`.
 */
import { ACCEPTED_REASON_CODES } from "../contract/index.ts";
import {
  booleanSchema,
  choiceSchema,
  dailyWindowSchema,
  numberSchema,
  option,
  type SchemaFactory,
  textSchema,
} from "./option-def.ts";
import { platformOptions } from "./options.ts";

/** A boolean flag whose env var is spelled `true` or `false`. */
const envBooleanSchema: SchemaFactory<boolean> = (z) =>
  z.preprocess((v) => (v === "true" ? true : v === "false" ? false : v), booleanSchema(z));

/** plan, apply and reconcile. */
export const runOptions = {
  state: option({
    flag: "state",
    env: "CONTROLS_STATE",
    default: "auto" as "auto" | "bulk" | "filtered" | "per-identity",
    schema: choiceSchema(["auto", "bulk", "filtered", "per-identity"]),
    kind: "string",
    choices: ["auto", "bulk", "filtered", "per-identity"],
    group: "run",
    help: "How to read the platform's controls: bulk (list every identity, 1000 a page; proves existence), filtered (list only identities holding a SELL_ONLY, then read the other candidates by id), per-identity (one read per flagged identity; not with --prune), or auto (the cheapest per rate budget; says why).",
  }),
  listingParallelism: option({
    flag: "listing-parallelism",
    env: "CONTROLS_LISTING_PARALLELISM",
    default: 8,
    schema: numberSchema({ whole: true, min: 1, max: 64 }),
    kind: "string",
    group: "run",
    help: "Most cursors of one identities listing read side by side, in disjoint created_at windows under the one rate budget of that path; the tool opens about page latency × --rate of them (never more than --concurrency). 1 reads a single cursor.",
  }),
  out: option({
    flag: "out",
    defaultLabel: "reports/<run-id>/",
    schema: textSchema,
    kind: "string",
    group: "run",
    help: "Report folder; checked (a folder you can write, not under /proc or /sys) and created before any request.",
  }),
  all: option({
    flag: "all",
    default: false,
    schema: booleanSchema,
    kind: "boolean",
    group: "run",
    help: "Also list in_sync rows in diff.csv (controls that already match their flags). An identity with no flag and no control has no finding, so no row either way.",
  }),
  force: option({
    flag: "force",
    default: false,
    schema: booleanSchema,
    kind: "boolean",
    group: "run",
    help: "Write the report into a folder that holds another run's report, replacing it.",
  }),
  metricsFile: option({
    flag: "metrics-file",
    env: "CONTROLS_METRICS_FILE",
    schema: textSchema,
    kind: "string",
    group: "run",
    help: "At the end of the run (failed runs too), write its figures to this file in the Prometheus text format, atomically, for node_exporter's textfile collector.",
  }),
  waitForPlatform: option({
    flag: "wait-for-platform",
    env: "CONTROLS_WAIT_FOR_PLATFORM",
    default: true,
    schema: envBooleanSchema,
    kind: "boolean",
    group: "run",
    help: "When user_disabled is true here and on the platform and no CLIENT SELL_ONLY exists yet (awaiting_platform_migration), let the platform's own migration create it. --no-wait-for-platform creates it now (with the risk of a duplicate if the platform does not look first).",
  }),
  waitForPlatformS: option({
    flag: "wait-for-platform-s",
    env: "CONTROLS_WAIT_FOR_PLATFORM_S",
    schema: numberSchema({ min: 0, max: 31_536_000 }),
    kind: "string",
    group: "run",
    help: "Create an awaited CLIENT SELL_ONLY once the tool has seen the identity awaiting the platform's migration for longer than this many seconds (the first sighting on this platform, by any run, a plan's included, is kept in the database across runs). Its controls are read again right before the create and after its answer: a control the platform's migration made meanwhile is kept and the tool's own deleted at once; one it makes after that second read is a duplicate (the tool's first), which reconcile --prune removes.",
  }),
} as const;

/** `report RUN_ID`: the same report options as the run that wrote it. */
export const reportOptions = { out: runOptions.out, all: runOptions.all } as const;

/** apply and reconcile: the commands that write to the platform. */
export const writeOptions = {
  yes: option({
    flag: "yes",
    default: false,
    schema: booleanSchema,
    kind: "boolean",
    group: "write",
    help: "Confirm the writes without a prompt (needed when not on a terminal). No env var does this.",
  }),
  resume: option({
    flag: "resume",
    schema: textSchema,
    kind: "string",
    group: "write",
    help: "Continue an unfinished run by id (see `controls-migrate runs`), with the settings it started with (rate, concurrency, state, limit, holds, reason, prune, wait for the platform); only --rate and --concurrency may be given anew.",
  }),
  reasonCode: option({
    flag: "reason-code",
    env: "CONTROLS_REASON_CODE",
    default: "OTHER" as string,
    schema: choiceSchema(ACCEPTED_REASON_CODES),
    kind: "string",
    choices: ACCEPTED_REASON_CODES,
    group: "write",
    help: "reason_code of the controls created.",
  }),
  reason: option({
    flag: "reason",
    env: "CONTROLS_REASON",
    default: "controls-migrate: migrated from legacy user_disabled",
    schema: textSchema,
    kind: "string",
    group: "write",
    help: "Free-text reason of the controls created (and of prune deletions).",
  }),
} as const;

/** apply, reconcile and revert: when writes are held (besides `pause`). */
export const holdOptions = {
  throttleFile: option({
    flag: "throttle-file",
    env: "CONTROLS_THROTTLE_FILE",
    schema: textSchema,
    kind: "string",
    group: "hold",
    help: "While this file exists, no new write is sent (requests in flight finish); removing it resumes. Checked every half second.",
  }),
  pauseOutside: option({
    flag: "pause-outside",
    env: "CONTROLS_PAUSE_OUTSIDE",
    schema: dailyWindowSchema,
    kind: "string",
    group: "hold",
    help: "Write only inside this daily window of local time, HH:MM-HH:MM (may wrap past midnight, e.g. 22:00-06:00); outside it the run waits.",
  }),
} as const;

/** apply only. */
export const applyOptions = {
  plan: option({
    flag: "plan",
    schema: textSchema,
    kind: "string",
    group: "apply",
    help: "Execute the creates of this earlier plan run, re-verifying each identity first.",
  }),
  limit: option({
    flag: "limit",
    schema: numberSchema({ whole: true, min: 1 }),
    kind: "string",
    group: "apply",
    help: "Execute only the first N actions (canary run); a later apply does the rest.",
  }),
} as const;

/** reconcile only. */
export const reconcileOptions = {
  prune: option({
    flag: "prune",
    default: false,
    schema: booleanSchema,
    kind: "boolean",
    group: "reconcile",
    help: "Also delete unexpected client-set SELL_ONLY controls that are overridable. Never touches SERVICE, non-overridable or other controls.",
  }),
  pruneOrphans: option({
    flag: "prune-orphans",
    default: false,
    schema: booleanSchema,
    kind: "boolean",
    group: "reconcile",
    help: "Also delete the controls this tool created on identities whose source row is gone (orphaned_own_control), never the last SELL_ONLY of an identity whose flags ask for one.",
  }),
  forceContested: option({
    flag: "force-contested",
    default: false,
    schema: booleanSchema,
    kind: "boolean",
    group: "reconcile",
    help: "Write to contested identities too (outside changes undid the tool's writes on them twice or more); without it they are reported and left as they are.",
  }),
  exitOn: option({
    flag: "exit-on",
    env: "CONTROLS_EXIT_ON",
    default: "client" as "client" | "any" | "changes",
    schema: choiceSchema(["client", "any", "changes"]),
    kind: "string",
    choices: ["client", "any", "changes"],
    group: "reconcile",
    help: "What makes reconcile exit 2: client (work left for the client: a finding of theirs the run did not settle), any (any finding left, the platform's included), changes (outside changes or new client work since the previous apply/reconcile: a nightly cron's alert).",
  }),
} as const;

/** `revert RUN_ID`. */
export const revertOptions = {
  dryRun: option({
    flag: "dry-run",
    default: false,
    schema: booleanSchema,
    kind: "boolean",
    group: "revert",
    help: "Write the report of what the revert would do (from the run's journal) and send nothing; no platform settings needed.",
  }),
  limit: option({
    flag: "limit",
    schema: numberSchema({ whole: true, min: 1 }),
    kind: "string",
    group: "revert",
    help: "Revert only the first N writes; the rest stay pending for `revert RUN_ID --resume REVERT_ID` (the summary prints the command).",
  }),
} as const;

/** `status`. */
export const statusOptions = {
  watch: option({
    flag: "watch",
    default: false,
    schema: booleanSchema,
    kind: "boolean",
    group: "status",
    help: "Refresh every 2 s until the run ends (redrawn in place on a terminal); Ctrl-C stops watching, never the run.",
  }),
} as const;

/** `set-rate`: the same ceiling as --rate. */
export const setRateOptions = {
  allowRateAboveLimit: platformOptions.allowRateAboveLimit,
} as const;

/** `runs`. */
export const runsOptions = {
  limit: option({
    flag: "limit",
    default: 20,
    schema: numberSchema({ whole: true, min: 1 }),
    kind: "string",
    group: "runs",
    help: "How many runs to show, newest first.",
  }),
} as const;

/** `show IDENTITY_ID`. */
export const showOptions = {
  limit: option({
    flag: "limit",
    default: 20,
    schema: numberSchema({ whole: true, min: 1, max: 10_000 }),
    kind: "string",
    group: "show",
    help: "How many runs to show, newest first (runs that stored nothing about the identity are left out).",
  }),
  before: option({
    flag: "before",
    schema: textSchema,
    kind: "string",
    group: "show",
    help: "Show the runs older than this run id (the next page; `show` prints the command).",
  }),
} as const;
