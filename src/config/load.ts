/**
 * The only reader of `process.env`: compiles defaults, then env vars, then flags into frozen option
 * objects that flow down to every other module. Every problem of a group of options is reported at
 * once, each naming the flag or env var to fix.
 */
import { TOKEN_RATE_LIMIT_RPS } from "../contract/index.ts";
import { UserError } from "../errors.ts";
import { Secret } from "../secret.ts";
import {
  applyOptions,
  holdOptions,
  reconcileOptions,
  reportOptions,
  runOptions,
  runsOptions,
  showOptions,
  writeOptions,
} from "./command-options.ts";
import type { OptionTable, OptionValues } from "./option-def.ts";
import {
  globalOptions,
  PLATFORM_RATE_LIMIT_RPS,
  platformOptions,
  sourceOptions,
} from "./options.ts";
import { type Argv, type Env, givenAs, readTable } from "./read-table.ts";
import { secretFromFile } from "./secret-file.ts";
import { demoOptions, seedOptions } from "./seed-demo-options.ts";
import { sinceLastOptions } from "./since-last-options.ts";

export type { Argv, Env } from "./read-table.ts";
export { givenAs, optionName, readTable } from "./read-table.ts";

export type GlobalConfig = OptionValues<typeof globalOptions>;
export type SourceConfig = OptionValues<typeof sourceOptions>;
export type NonUuidPolicy = SourceConfig["nonUuidIds"];
export type PipelineConfig = OptionValues<
  typeof runOptions &
    typeof writeOptions &
    typeof holdOptions &
    typeof applyOptions &
    typeof reconcileOptions &
    typeof sinceLastOptions
>;
/** What writes are held by, besides `pause`: the throttle file and the daily window. */
export type HoldConfig = OptionValues<typeof holdOptions>;
export type RunsConfig = OptionValues<typeof runsOptions>;
export type ShowConfig = OptionValues<typeof showOptions>;
export type ReportConfig = OptionValues<typeof reportOptions>;
export type SeedConfig = OptionValues<typeof seedOptions>;
export type DemoConfig = OptionValues<typeof demoOptions>;

export interface PlatformConfig
  extends Omit<OptionValues<typeof platformOptions>, "clientSecretFile"> {
  /** From --client-secret-file or env OAUTH_CLIENT_SECRET; printed as "[redacted]". */
  readonly clientSecret: Secret;
  /** The token endpoint's budget; the platform allows 1 rps. */
  readonly tokenRps: number;
}

/** Throws one UserError listing every problem, or returns. */
export function refuseProblems(problems: readonly string[]): void {
  if (problems.length === 1) throw new UserError(problems[0]!);
  if (problems.length > 1) {
    throw new UserError(
      `${problems.length} settings need fixing:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
  }
}

/** Compiles one table, refusing any problem. */
export function load<T extends OptionTable>(table: T, argv: Argv, env: Env): OptionValues<T> {
  const problems: string[] = [];
  const values = readTable(table, argv, env, problems);
  refuseProblems(problems);
  return values;
}

/**
 * The options every command reads: database, logging, output.
 *
 * @example
 *   const global = loadGlobalConfig(argv); // { databaseUrl: undefined, dataDir: ".data/pglite", ... }
 */
export function loadGlobalConfig(argv: Argv, env: Env = process.env): GlobalConfig {
  return load(globalOptions, argv, env);
}

/**
 * Where the legacy flags are read from.
 *
 * @example
 *   loadSourceConfig({}, {}).relation // "identities"
 */
export function loadSourceConfig(argv: Argv, env: Env = process.env): SourceConfig {
  return load(sourceOptions, argv, env);
}

/**
 * The platform's address, credentials and request budget. Every missing or invalid setting is
 * reported at once (URLs, client id, secret), each with its flag and env var.
 *
 * @example
 *   const platform = loadPlatformConfig(argv);
 *   platform.clientSecret.reveal(); // only where the secret is sent
 */
export function loadPlatformConfig(argv: Argv, env: Env = process.env): PlatformConfig {
  const problems: string[] = [];
  const platform = readPlatform(argv, env, problems);
  refuseProblems(problems);
  return platform;
}

/** The platform config, its problems appended to `problems` (then the result is unusable). */
export function readPlatform(argv: Argv, env: Env, problems: string[]): PlatformConfig {
  const { clientSecretFile, ...values } = readTable(platformOptions, argv, env, problems);
  const secret = readSecret(clientSecretFile, env, problems);
  const ceiling = rateCeilingProblem(
    values.rate,
    values.allowRateAboveLimit,
    givenAs(platformOptions.rate, argv, env) ?? "--rate",
  );
  if (ceiling) problems.push(ceiling);
  return Object.freeze({
    ...values,
    clientSecret: new Secret(secret ?? ""),
    tokenRps: TOKEN_RATE_LIMIT_RPS,
  });
}

/**
 * The rule of --rate and `set-rate`: above the platform's limit only with --allow-rate-above-limit.
 * Returns the problem, naming how the rate was given, or undefined.
 *
 * @example
 *   rateCeilingProblem(80, false, "--rate") // "--rate 80 is above the platform's limit of 50 ..."
 */
export function rateCeilingProblem(
  rate: number,
  allowed: boolean,
  name: string,
): string | undefined {
  if (rate <= PLATFORM_RATE_LIMIT_RPS || allowed) return undefined;
  return `${name} ${rate} is above the platform's limit of ${PLATFORM_RATE_LIMIT_RPS} requests/s per endpoint. One 429 stops every request from your address, production traffic included, for five minutes. Pass --allow-rate-above-limit only for a platform or sandbox with a higher limit.`;
}

/** What plan, apply and reconcile need, beyond the global options. */
export interface RunConfigs {
  readonly source: SourceConfig;
  readonly platform: PlatformConfig;
  readonly pipeline: PipelineConfig;
}

/**
 * The source, platform and pipeline options of plan/apply/reconcile, every problem of the three
 * reported together (missing URLs, client id and secret, malformed numbers...).
 *
 * @example
 *   const { source, platform, pipeline } = loadRunConfigs(argv);
 */
export function loadRunConfigs(argv: Argv, env: Env = process.env): RunConfigs {
  const problems: string[] = [];
  const source = readTable(sourceOptions, argv, env, problems);
  const platform = readPlatform(argv, env, problems);
  const pipeline = readTable(pipelineTable, argv, env, problems);
  refuseProblems(problems);
  return { source, platform, pipeline };
}

/** The secret from its file, else from env OAUTH_CLIENT_SECRET; never from a flag. */
function readSecret(file: string | undefined, env: Env, problems: string[]): string | undefined {
  if (file) {
    const read = secretFromFile(file);
    if ("problem" in read) problems.push(read.problem);
    return "secret" in read ? read.secret : undefined;
  }
  const secret = env.OAUTH_CLIENT_SECRET || undefined;
  if (!secret) {
    problems.push(
      "Missing client secret: set env OAUTH_CLIENT_SECRET or pass --client-secret-file PATH.",
    );
  }
  return secret;
}

/**
 * What plan, apply and reconcile do: strategy, reports, confirmation, resume or plan, limits.
 * Confirmation comes only from --yes or the terminal: no env var bypasses it.
 *
 * @example
 *   loadPipelineConfig({ limit: "20", yes: true }).limit // 20
 */
export function loadPipelineConfig(argv: Argv, env: Env = process.env): PipelineConfig {
  return load(pipelineTable, argv, env);
}

const pipelineTable = {
  ...runOptions,
  ...writeOptions,
  ...holdOptions,
  ...applyOptions,
  ...reconcileOptions,
  ...sinceLastOptions,
};

/**
 * `runs`: how many to list.
 *
 * @example
 *   loadRunsConfig({}).limit // 20
 */
export function loadRunsConfig(argv: Argv, env: Env = process.env): RunsConfig {
  return load(runsOptions, argv, env);
}

/**
 * `show IDENTITY_ID`: how many runs a page holds, and where it starts.
 *
 * @example
 *   loadShowConfig({ before: "20261122-101500-ab12" }).limit // 20
 */
export function loadShowConfig(argv: Argv, env: Env = process.env): ShowConfig {
  return load(showOptions, argv, env);
}

/**
 * `report RUN_ID`: where to write and whether in_sync rows are listed.
 *
 * @example
 *   loadReportConfig({ out: "/tmp/r" }).all // false
 */
export function loadReportConfig(argv: Argv, env: Env = process.env): ReportConfig {
  return load(reportOptions, argv, env);
}

/**
 * `db seed`: how many synthetic identities, which seed, with bad rows or not.
 *
 * @example
 *   loadSeedConfig({ identities: "1000" }).seed // 1
 */
export function loadSeedConfig(argv: Argv, env: Env = process.env): SeedConfig {
  return load(seedOptions, argv, env);
}

/**
 * `demo`: the size and seed of the rehearsal.
 *
 * @example
 *   loadDemoConfig({}).identities // 10000
 */
export function loadDemoConfig(argv: Argv, env: Env = process.env): DemoConfig {
  return load(demoOptions, argv, env);
}
