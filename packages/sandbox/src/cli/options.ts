/**
 * The `controls-sandbox` flags: one options table on the CLI's row type (flag, default, zod
 * schema, help), from which yargs, --help and the checks are generated. Defaults come from the
 * sandbox's own defaults (`DEFAULT_LIMITS`, `DEFAULT_FAULTS`), which come from the contract.
 */
import { DEFAULT_FAULTS } from "../gateway/faults.ts";
import { UPDATED_AT_POLICIES } from "../identity/types.ts";
import { DEFAULT_LIMITS } from "../options.ts";
import {
  type Argv,
  booleanSchema,
  choiceSchema,
  type Env,
  isLoopbackHost,
  numberSchema,
  option,
  readTable,
  type SchemaFactory,
  textSchema,
} from "../shared.ts";
import { endpointRatesFromArgv } from "./endpoint-rates.ts";

const fraction = numberSchema({ min: 0, max: 1 });
const nonNegative = numberSchema({ min: 0 });
/** A number of seconds above zero. */
const positive: SchemaFactory<number> = (z) =>
  numberSchema({})(z).refine((n) => n > 0, {
    error: (iss) => `must be greater than 0, got ${String(iss.input)}`,
  });

/** Every `controls-sandbox` option. */
export const sandboxOptions = {
  port: option({
    flag: "port",
    default: 8080,
    schema: numberSchema({ whole: true, min: 0, max: 65535 }),
    kind: "string",
    group: "sandbox",
    help: "TCP port; 0 lets the OS pick.",
  }),
  host: option({
    flag: "host",
    default: "127.0.0.1",
    schema: textSchema,
    kind: "string",
    group: "sandbox",
    help: "Address to bind. Non-loopback addresses need --allow-remote.",
  }),
  allowRemote: option({
    flag: "allow-remote",
    default: false,
    schema: booleanSchema,
    kind: "boolean",
    group: "sandbox",
    help: "Allow a non-loopback --host (the sandbox has no TLS and prints its secrets).",
  }),
  identities: option({
    flag: "identities",
    default: 0,
    schema: numberSchema({ whole: true, min: 0, max: 20_000_000 }),
    kind: "string",
    group: "sandbox",
    help: "Synthetic identities to seed at start (the same ones `controls-migrate db seed` writes).",
  }),
  seed: option({
    flag: "seed",
    default: 1,
    schema: numberSchema({ whole: true }),
    kind: "string",
    group: "sandbox",
    help: "Seed of the synthetic data and drift.",
  }),
  migratedFraction: option({
    flag: "migrated-fraction",
    default: 0.5,
    schema: fraction,
    kind: "string",
    group: "sandbox",
    help: "Fraction of flagged identities already migrated to SELL_ONLY controls.",
  }),
  driftFraction: option({
    flag: "drift-fraction",
    default: 0,
    schema: fraction,
    kind: "string",
    group: "sandbox",
    help: "Fraction of identities with injected drift (wrong, extra or odd controls).",
  }),
  legacyDriftFraction: option({
    flag: "legacy-drift-fraction",
    default: 0,
    schema: fraction,
    kind: "string",
    group: "sandbox",
    help: "Fraction of identities whose platform legacy fields (user_disabled, admin_disabled) differ from the seeded source flags, half turned on and half turned off.",
  }),
  autoMigrateRate: option({
    flag: "auto-migrate-rate",
    default: 0,
    schema: nonNegative,
    kind: "string",
    group: "sandbox",
    help: 'The platform\'s background migration: identities a second whose legacy field is true and that hold no matching control get one (reason "migrated from user_disabled" / "migrated from admin_disabled"), following --duplicate-policy; 0 is off. Progress (done, left) in GET /__sandbox/stats.',
  }),
  rateLimitRps: option({
    flag: "rate-limit",
    default: DEFAULT_LIMITS.rateLimitRps,
    schema: nonNegative,
    kind: "string",
    group: "sandbox",
    help: "Requests/s per client and endpoint, averaged over --rate-window-s; 0 = off.",
  }),
  endpointRateLimits: option({
    flag: "endpoint-rate-limit",
    // Repeatable: every occurrence is read by endpointRatesFromArgv, not by the table.
    schema: textSchema,
    kind: "string",
    group: "sandbox",
    help: "PATH=RPS: one endpoint's own limit instead of the platform's share of --rate-limit (transfers 20/50, quote executions 10/50), e.g. /v2/profiles/*/quote-executions=2. Repeatable.",
  }),
  tokenRateLimitRps: option({
    flag: "token-rate-limit",
    default: DEFAULT_LIMITS.tokenRateLimitRps,
    schema: nonNegative,
    kind: "string",
    group: "sandbox",
    help: "Requests/s allowed on the token endpoint; 0 = off.",
  }),
  rateWindowS: option({
    flag: "rate-window-s",
    default: DEFAULT_LIMITS.rateWindowS,
    schema: positive,
    kind: "string",
    group: "sandbox",
    help: "Window over which the rate is averaged, in seconds.",
  }),
  penaltyS: option({
    flag: "penalty-s",
    default: DEFAULT_LIMITS.penaltyS,
    schema: nonNegative,
    kind: "string",
    group: "sandbox",
    help: "How long every request to an endpoint is refused after going over its limit.",
  }),
  latencyMs: option({
    flag: "latency-ms",
    default: DEFAULT_FAULTS.latencyMs,
    schema: nonNegative,
    kind: "string",
    group: "sandbox",
    help: "Added latency per answer.",
  }),
  latencyJitterMs: option({
    flag: "latency-jitter-ms",
    default: DEFAULT_FAULTS.latencyJitterMs,
    schema: nonNegative,
    kind: "string",
    group: "sandbox",
    help: "Uniform random extra latency on top of --latency-ms.",
  }),
  failRate: option({
    flag: "fail-rate",
    default: DEFAULT_FAULTS.failRate,
    schema: fraction,
    kind: "string",
    group: "sandbox",
    help: "Fraction of requests answered 500/502/503 without committing anything.",
  }),
  ambiguousRate: option({
    flag: "ambiguous-rate",
    default: DEFAULT_FAULTS.ambiguousRate,
    schema: fraction,
    kind: "string",
    group: "sandbox",
    help: "Fraction of writes committed whose connection is then dropped without an answer.",
  }),
  hangRate: option({
    flag: "hang-rate",
    default: DEFAULT_FAULTS.hangRate,
    schema: fraction,
    kind: "string",
    group: "sandbox",
    help: "Fraction of requests never answered (until the client gives up).",
  }),
  tokenTtlS: option({
    flag: "token-ttl-s",
    default: DEFAULT_LIMITS.tokenTtlS,
    schema: positive,
    kind: "string",
    group: "sandbox",
    help: "Lifetime of issued bearer tokens (expires_in).",
  }),
  setBySpelling: option({
    flag: "set-by-spelling",
    default: "published" as "published" | "short",
    schema: choiceSchema(["published", "short"]),
    kind: "string",
    choices: ["published", "short"],
    group: "sandbox",
    help: "How set_by is spelled: published (SET_BY_CLIENT / SET_BY_SERVICE, the published schema) or short (CLIENT / SERVICE, for rehearsals against the older spelling).",
  }),
  duplicatePolicy: option({
    flag: "duplicate-policy",
    default: DEFAULT_LIMITS.duplicatePolicy,
    schema: choiceSchema(["allow", "reject"]),
    kind: "string",
    choices: ["allow", "reject"],
    group: "sandbox",
    help: "A second active control of the same type on one identity: allow it, or refuse with 409.",
  }),
  updatedAtPolicy: option({
    flag: "updated-at-policy",
    default: DEFAULT_LIMITS.updatedAtPolicy,
    schema: choiceSchema([...UPDATED_AT_POLICIES]),
    kind: "string",
    choices: [...UPDATED_AT_POLICIES],
    group: "sandbox",
    help: "What moves an identity's updated_at (the platform does not publish it), for rehearsing reads of only what changed (updated_at.gte): all (a control created or deleted, the platform's own migration, a legacy field changed: the honest platform), identity-fields (only the identity's own fields, user_disabled and admin_disabled included; control changes do not: a platform whose updated_at misses them) or none (nothing after creation: a platform whose updated_at never moves). Also PUT /__sandbox/limits {\"updated_at_policy\": …}.",
  }),
} as const;

/** The compiled start options of `controls-sandbox`. */
export type SandboxCliOptions = ReturnType<typeof sandboxOptionsFromArgv>;

/**
 * Compiles and checks the flags into start options. Every problem is reported at once, each
 * naming its flag, as one `SandboxUsageError`.
 *
 * @example
 *   sandboxOptionsFromArgv({ "fail-rate": "2" }); // throws "--fail-rate must be at most 1, got 2."
 */
export function sandboxOptionsFromArgv(argv: Argv, env: Env = {}) {
  const problems: string[] = [];
  const {
    allowRemote,
    endpointRateLimits: _repeatable,
    ...values
  } = readTable(sandboxOptions, argv, env, problems);
  const endpointRateLimits = endpointRatesFromArgv(argv, problems);
  const host = values.host;
  if (problems.length === 0 && !isLoopbackHost(host) && !allowRemote) {
    problems.push(
      `--host ${host} is not a loopback address. The sandbox has no TLS and prints its client secrets; pass --allow-remote to bind ${host} anyway.`,
    );
  }
  if (problems.length === 1) throw new SandboxUsageError(problems[0]!);
  if (problems.length > 1) {
    throw new SandboxUsageError(
      `${problems.length} settings need fixing:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
  }
  return Object.freeze({ ...values, ...(endpointRateLimits ? { endpointRateLimits } : {}) });
}

/** A refusal of the command line: printed alone, exit 1. */
export class SandboxUsageError extends Error {
  override name = "SandboxUsageError";
}
