import type { Options } from "yargs";
import type { Argv } from "../config.ts";
import { isLoopbackHost } from "../config.ts";
import { UserError } from "../errors.ts";
import { normalizeEndpointRates } from "../sandbox/gateway/endpoint-limits.ts";
import type { SandboxOptions } from "../sandbox/index.ts";

/** The `sandbox` command's flags (yargs table). Defaults are applied in {@link sandboxOptionsFromArgv}. */
export const sandboxFlags = {
  port: { type: "number", defaultDescription: "8080", describe: "TCP port; 0 lets the OS pick." },
  host: {
    type: "string",
    defaultDescription: "127.0.0.1",
    describe: "Address to bind. Non-loopback addresses need --allow-remote.",
  },
  "allow-remote": {
    type: "boolean",
    describe: "Allow a non-loopback --host (the sandbox has no TLS and prints its secrets).",
  },
  identities: {
    type: "number",
    defaultDescription: "0",
    describe: "Synthetic identities to seed at start (the same ones `db seed` writes).",
  },
  seed: {
    type: "number",
    defaultDescription: "1",
    describe: "Seed of the synthetic data and drift.",
  },
  "from-db": {
    type: "boolean",
    describe: "Seed the identities of the configured source relation (--source-relation ...).",
  },
  "migrated-fraction": {
    type: "number",
    defaultDescription: "0.5",
    describe: "Fraction of flagged identities already migrated to SELL_ONLY controls.",
  },
  "legacy-drift-fraction": {
    type: "number",
    defaultDescription: "0",
    describe:
      "Fraction of identities whose platform legacy fields (user_disabled, admin_disabled) differ from the seeded source flags, half turned on and half turned off.",
  },
  "auto-migrate-rate": {
    type: "number",
    defaultDescription: "0 (off)",
    describe:
      'The platform\'s background migration: identities a second whose legacy field is true and that hold no matching control get one (reason "migrated from user_disabled" / "migrated from admin_disabled"), following --duplicate-policy. Progress (done, left) in GET /__sandbox/stats.',
  },
  "drift-fraction": {
    type: "number",
    defaultDescription: "0",
    describe: "Fraction of identities with injected drift (wrong, extra or odd controls).",
  },
  "rate-limit": {
    type: "number",
    defaultDescription: "50",
    describe: "Requests/s per client and endpoint, averaged over --rate-window-s; 0 = off.",
  },
  "endpoint-rate-limit": {
    type: "string",
    array: true,
    describe:
      "PATH=RPS: one endpoint's own limit instead of the platform's share of --rate-limit (transfers 20/50, quote executions 10/50), e.g. /v2/profiles/*/quote-executions=2. Repeatable.",
  },
  "token-rate-limit": {
    type: "number",
    defaultDescription: "1",
    describe: "Requests/s allowed on the token endpoint; 0 = off.",
  },
  "rate-window-s": {
    type: "number",
    defaultDescription: "300",
    describe: "Window over which the rate is averaged.",
  },
  "penalty-s": {
    type: "number",
    defaultDescription: "300",
    describe: "How long every request to an endpoint is refused after going over its limit.",
  },
  "latency-ms": { type: "number", defaultDescription: "0", describe: "Added latency per answer." },
  "latency-jitter-ms": {
    type: "number",
    defaultDescription: "0",
    describe: "Uniform random extra latency on top of --latency-ms.",
  },
  "fail-rate": {
    type: "number",
    defaultDescription: "0",
    describe: "Fraction of requests answered 500/502/503 without committing anything.",
  },
  "ambiguous-rate": {
    type: "number",
    defaultDescription: "0",
    describe: "Fraction of writes committed whose connection is then dropped without an answer.",
  },
  "hang-rate": {
    type: "number",
    defaultDescription: "0",
    describe: "Fraction of requests never answered (until the client gives up).",
  },
  "token-ttl-s": {
    type: "number",
    defaultDescription: "3600",
    describe: "Lifetime of issued bearer tokens (expires_in).",
  },
  "set-by-spelling": {
    type: "string",
    choices: ["published", "short"],
    defaultDescription: "published",
    describe:
      "How set_by is spelled: published (SET_BY_CLIENT / SET_BY_SERVICE, the published schema) or short (CLIENT / SERVICE, for rehearsals against the older spelling).",
  },
  "duplicate-policy": {
    type: "string",
    choices: ["allow", "reject"],
    defaultDescription: "allow",
    describe:
      "A second active control of the same type on one identity: allow it, or refuse with 409.",
  },
} as const satisfies Record<string, Options>;

interface NumberRule {
  min?: number;
  max?: number;
  /** The minimum itself is excluded. */
  above?: number;
  integer?: boolean;
}

function numberFlag(argv: Argv, flag: string, rule: NumberRule): number | undefined {
  const raw = argv[flag];
  if (raw === undefined) return undefined;
  if (Array.isArray(raw)) throw new UserError(`--${flag} was given more than once.`);
  const v = Number(raw);
  if (typeof raw === "boolean" || !Number.isFinite(v)) {
    throw new UserError(`--${flag} must be a number, got ${JSON.stringify(raw)}.`);
  }
  if (rule.min !== undefined && rule.max !== undefined && (v < rule.min || v > rule.max)) {
    throw new UserError(`--${flag} must be between ${rule.min} and ${rule.max}, got ${v}.`);
  }
  if (rule.min !== undefined && v < rule.min) {
    throw new UserError(`--${flag} must be at least ${rule.min}, got ${v}.`);
  }
  if (rule.above !== undefined && v <= rule.above) {
    throw new UserError(`--${flag} must be greater than ${rule.above}, got ${v}.`);
  }
  if (rule.integer && !Number.isInteger(v)) {
    throw new UserError(`--${flag} must be a whole number, got ${v}.`);
  }
  return v;
}

/** `--endpoint-rate-limit PATH=RPS`, repeatable, into the override table. */
function endpointRatesFromArgv(argv: Argv): Record<string, number> | undefined {
  const raw = argv["endpoint-rate-limit"];
  if (raw === undefined) return undefined;
  const table: Record<string, number> = {};
  for (const entry of (Array.isArray(raw) ? raw : [raw]).map(String)) {
    const eq = entry.lastIndexOf("=");
    const rps = eq > 0 ? Number(entry.slice(eq + 1)) : Number.NaN;
    if (eq <= 0 || entry.slice(eq + 1).trim() === "" || !Number.isFinite(rps) || rps < 0) {
      throw new UserError(
        `--endpoint-rate-limit takes PATH=RPS with RPS a number >= 0 (0 = unlimited), got ${JSON.stringify(entry)}.`,
      );
    }
    table[entry.slice(0, eq)] = rps;
  }
  try {
    return normalizeEndpointRates(table);
  } catch (err) {
    throw new UserError(
      `--endpoint-rate-limit: ${(err as Error).message.replace(/^endpointRateLimits: /, "")}.`,
    );
  }
}

const FRACTION: NumberRule = { min: 0, max: 1 };
const NON_NEGATIVE: NumberRule = { min: 0 };

/**
 * Compiles and checks the `sandbox` command's flags into start options; every refusal is a
 * UserError naming the flag.
 *
 * @example
 *   sandboxOptionsFromArgv({ "fail-rate": 2 }); // throws "--fail-rate must be between 0 and 1, got 2."
 */
export function sandboxOptionsFromArgv(
  argv: Argv,
): SandboxOptions & { port: number; host: string } {
  const host = argv.host === undefined ? "127.0.0.1" : String(argv.host);
  if (host === "") throw new UserError("--host must not be empty.");
  if (!isLoopbackHost(host) && argv["allow-remote"] !== true) {
    throw new UserError(
      `--host ${host} is not a loopback address. The sandbox has no TLS and prints its client secrets; pass --allow-remote to bind ${host} anyway.`,
    );
  }
  const policy = argv["duplicate-policy"];
  if (policy !== undefined && policy !== "allow" && policy !== "reject") {
    throw new UserError(
      `--duplicate-policy must be allow or reject, got ${JSON.stringify(policy)}.`,
    );
  }
  const spelling = argv["set-by-spelling"];
  if (spelling !== undefined && spelling !== "published" && spelling !== "short") {
    throw new UserError(
      `--set-by-spelling must be published or short, got ${JSON.stringify(spelling)}.`,
    );
  }
  const options = {
    host,
    port: numberFlag(argv, "port", { min: 0, max: 65535, integer: true }) ?? 8080,
    identities: numberFlag(argv, "identities", { min: 0, max: 20_000_000, integer: true }),
    seed: numberFlag(argv, "seed", { integer: true }),
    migratedFraction: numberFlag(argv, "migrated-fraction", FRACTION),
    driftFraction: numberFlag(argv, "drift-fraction", FRACTION),
    legacyDriftFraction: numberFlag(argv, "legacy-drift-fraction", FRACTION),
    autoMigrateRate: numberFlag(argv, "auto-migrate-rate", NON_NEGATIVE),
    rateLimitRps: numberFlag(argv, "rate-limit", NON_NEGATIVE),
    tokenRateLimitRps: numberFlag(argv, "token-rate-limit", NON_NEGATIVE),
    rateWindowS: numberFlag(argv, "rate-window-s", { above: 0 }),
    penaltyS: numberFlag(argv, "penalty-s", NON_NEGATIVE),
    latencyMs: numberFlag(argv, "latency-ms", NON_NEGATIVE),
    latencyJitterMs: numberFlag(argv, "latency-jitter-ms", NON_NEGATIVE),
    failRate: numberFlag(argv, "fail-rate", FRACTION),
    ambiguousRate: numberFlag(argv, "ambiguous-rate", FRACTION),
    hangRate: numberFlag(argv, "hang-rate", FRACTION),
    tokenTtlS: numberFlag(argv, "token-ttl-s", { above: 0 }),
    duplicatePolicy: policy as "allow" | "reject" | undefined,
    setBySpelling: spelling as "published" | "short" | undefined,
  };
  const endpointRateLimits = endpointRatesFromArgv(argv);
  if (endpointRateLimits !== undefined) Object.assign(options, { endpointRateLimits });
  if (argv["from-db"] === true && options.identities !== undefined) {
    throw new UserError("--from-db and --identities are exclusive: seed from one or the other.");
  }
  return options;
}
