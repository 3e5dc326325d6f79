/**
 * The only module that reads `process.env` and raw flags. It compiles defaults, then env vars, then
 * flags into frozen option objects that flow down to every other module.
 */
import { readFileSync } from "node:fs";
import type { Options } from "yargs";
import { UserError } from "./errors.ts";
import { LOG_LEVELS, type LogLevel } from "./log.ts";
import { REASON_CODES } from "./platform/types.ts";
import { Secret } from "./secret.ts";

export type Env = Readonly<Record<string, string | undefined>>;
export type Argv = Readonly<Record<string, unknown>>;

// ---------------------------------------------------------------------------------------------
// Option tables. Each entry: flag name → yargs option plus the env var that backs it.
// Defaults are applied here, not by yargs, so that env vars sit between defaults and flags.
// ---------------------------------------------------------------------------------------------

interface OptionSpec extends Options {
  readonly env?: string;
}

function spec(o: OptionSpec): OptionSpec {
  const { env, ...rest } = o;
  const parts = [rest.describe ?? ""];
  if (env) parts.push(`[env ${env}]`);
  return { ...rest, env, describe: parts.join(" ") } as OptionSpec;
}

export const globalOptions = {
  "database-url": spec({
    type: "string",
    env: "DATABASE_URL",
    describe: "PostgreSQL connection URL. Without it an embedded PGlite database is used.",
  }),
  "data-dir": spec({
    type: "string",
    env: "CONTROLS_DATA_DIR",
    defaultDescription: ".data/pglite",
    describe: "Folder of the embedded PGlite database (when no --database-url).",
  }),
  "log-level": spec({
    type: "string",
    choices: LOG_LEVELS as unknown as string[],
    env: "CONTROLS_LOG_LEVEL",
    defaultDescription: "info",
    describe: "Log verbosity on stderr; debug also prints stack traces.",
  }),
  json: spec({
    type: "boolean",
    describe: "Print the machine-readable result (summary JSON) on stdout.",
  }),
  progress: spec({
    type: "boolean",
    defaultDescription: "true",
    describe:
      "Show progress on stderr (a bar on a TTY, a line every few seconds otherwise). Use --no-progress to silence.",
  }),
} as const satisfies Record<string, OptionSpec>;

export const sourceOptions = {
  "source-relation": spec({
    type: "string",
    env: "CONTROLS_SOURCE_RELATION",
    defaultDescription: "identities",
    describe: "Relation holding the legacy flags; may be schema-qualified (schema.table).",
  }),
  "source-id-column": spec({
    type: "string",
    env: "CONTROLS_SOURCE_ID_COLUMN",
    defaultDescription: "id",
    describe: "Column with the platform identity id.",
  }),
  "source-user-disabled-column": spec({
    type: "string",
    env: "CONTROLS_SOURCE_USER_DISABLED_COLUMN",
    defaultDescription: "user_disabled",
    describe: "Boolean column with the legacy user_disabled flag.",
  }),
  "source-admin-disabled-column": spec({
    type: "string",
    env: "CONTROLS_SOURCE_ADMIN_DISABLED_COLUMN",
    defaultDescription: "admin_disabled",
    describe: "Boolean column with the legacy admin_disabled flag.",
  }),
  "batch-size": spec({
    type: "number",
    env: "CONTROLS_BATCH_SIZE",
    defaultDescription: "1000",
    describe: "Rows per keyset page when reading the source relation.",
  }),
  "non-uuid-ids": spec({
    type: "string",
    choices: ["accept", "warn", "reject"],
    env: "CONTROLS_NON_UUID_IDS",
    defaultDescription: "warn",
    describe:
      "What to do with source ids that are not UUIDs: accept silently, warn (keep the row, record an anomaly) or reject (report it, never act on it).",
  }),
} as const satisfies Record<string, OptionSpec>;

export const platformOptions = {
  "api-url": spec({
    type: "string",
    env: "API_BASE_URL",
    describe:
      "Base URL of the platform API (e.g. https://api.example.com). http:// only for loopback.",
  }),
  "token-url": spec({
    type: "string",
    env: "OAUTH_TOKEN_URL",
    describe: "OAuth2 token endpoint URL.",
  }),
  "client-id": spec({
    type: "string",
    env: "OAUTH_CLIENT_ID",
    describe: "OAuth2 client id.",
  }),
  "client-secret-file": spec({
    type: "string",
    describe:
      "File holding the OAuth2 client secret. Otherwise the secret comes from env OAUTH_CLIENT_SECRET. There is deliberately no flag taking the secret itself.",
  }),
  rate: spec({
    type: "number",
    env: "CONTROLS_RATE",
    defaultDescription: "40",
    describe: "Request budget per endpoint, in requests/second (the platform allows 50).",
  }),
  concurrency: spec({
    type: "number",
    env: "CONTROLS_CONCURRENCY",
    defaultDescription: "8",
    describe: "Maximum requests in flight at once.",
  }),
  "timeout-ms": spec({
    type: "number",
    env: "CONTROLS_TIMEOUT_MS",
    defaultDescription: "30000",
    describe: "Per-request timeout.",
  }),
  "penalty-s": spec({
    type: "number",
    env: "CONTROLS_PENALTY_S",
    defaultDescription: "300",
    describe: "How long to send nothing to an endpoint after a 429 without Retry-After.",
  }),
  "max-attempts": spec({
    type: "number",
    env: "CONTROLS_MAX_ATTEMPTS",
    defaultDescription: "5",
    describe: "Attempts per read request before giving up (creates are never blindly retried).",
  }),
  "retry-base-ms": spec({
    type: "number",
    env: "CONTROLS_RETRY_BASE_MS",
    defaultDescription: "250",
    describe: "Base of the exponential backoff with full jitter.",
  }),
  "retry-cap-ms": spec({
    type: "number",
    env: "CONTROLS_RETRY_CAP_MS",
    defaultDescription: "10000",
    describe: "Cap of the exponential backoff.",
  }),
} as const satisfies Record<string, OptionSpec>;

// ---------------------------------------------------------------------------------------------
// Compiled configuration.
// ---------------------------------------------------------------------------------------------

export interface GlobalConfig {
  /** Raw connection string; print only through `redactUrl`. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly logLevel: LogLevel;
  readonly json: boolean;
  readonly progress: boolean;
}

export type NonUuidPolicy = "accept" | "warn" | "reject";

export interface SourceConfig {
  readonly relation: string;
  readonly idColumn: string;
  readonly userDisabledColumn: string;
  readonly adminDisabledColumn: string;
  readonly batchSize: number;
  readonly nonUuidIds: NonUuidPolicy;
}

export interface PlatformConfig {
  readonly apiUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: Secret;
  readonly rate: number;
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly penaltyS: number;
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  readonly retryCapMs: number;
  /** The token endpoint's budget; the platform allows 1 rps. */
  readonly tokenRps: number;
}

function pick<T>(argv: Argv, flag: string): T | undefined {
  const v = argv[flag];
  return v === undefined ? undefined : (v as T);
}

function str(argv: Argv, env: Env, flag: string, envName: string | undefined): string | undefined {
  const fromFlag = pick<string>(argv, flag);
  if (fromFlag !== undefined && fromFlag !== "") return fromFlag;
  const fromEnv = envName ? env[envName] : undefined;
  return fromEnv !== undefined && fromEnv !== "" ? fromEnv : undefined;
}

function num(
  argv: Argv,
  env: Env,
  flag: string,
  envName: string | undefined,
  fallback: number,
  check: { min?: number; max?: number; integer?: boolean } = {},
): number {
  const fromFlag = pick<number>(argv, flag);
  let value: number;
  let source: string;
  if (fromFlag !== undefined) {
    value = Number(fromFlag);
    source = `--${flag}`;
  } else if (envName && env[envName] !== undefined && env[envName] !== "") {
    value = Number(env[envName]);
    source = `env ${envName}`;
  } else {
    return fallback;
  }
  if (!Number.isFinite(value))
    throw new UserError(`${source} must be a number, got "${fromFlag ?? env[envName ?? ""]}".`);
  if (check.integer && !Number.isInteger(value))
    throw new UserError(`${source} must be a whole number, got ${value}.`);
  if (check.min !== undefined && value < check.min)
    throw new UserError(`${source} must be at least ${check.min}, got ${value}.`);
  if (check.max !== undefined && value > check.max)
    throw new UserError(`${source} must be at most ${check.max}, got ${value}.`);
  return value;
}

function bool(argv: Argv, flag: string, fallback: boolean): boolean {
  const v = pick<boolean>(argv, flag);
  return v === undefined ? fallback : Boolean(v);
}

export function loadGlobalConfig(argv: Argv, env: Env = process.env): GlobalConfig {
  const logLevel = (str(argv, env, "log-level", "CONTROLS_LOG_LEVEL") ?? "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new UserError(
      `env CONTROLS_LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}".`,
    );
  }
  const databaseUrl = str(argv, env, "database-url", "DATABASE_URL");
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new UserError(
      `${argv["database-url"] ? "--database-url" : "env DATABASE_URL"} must start with postgres:// or postgresql://.`,
    );
  }
  return Object.freeze({
    databaseUrl,
    dataDir: str(argv, env, "data-dir", "CONTROLS_DATA_DIR") ?? ".data/pglite",
    logLevel,
    json: bool(argv, "json", false),
    progress: bool(argv, "progress", true),
  });
}

export function loadSourceConfig(argv: Argv, env: Env = process.env): SourceConfig {
  const nonUuidIds = (str(argv, env, "non-uuid-ids", "CONTROLS_NON_UUID_IDS") ??
    "warn") as NonUuidPolicy;
  if (!["accept", "warn", "reject"].includes(nonUuidIds)) {
    throw new UserError(
      `env CONTROLS_NON_UUID_IDS must be accept, warn or reject, got "${nonUuidIds}".`,
    );
  }
  return Object.freeze({
    relation: str(argv, env, "source-relation", "CONTROLS_SOURCE_RELATION") ?? "identities",
    idColumn: str(argv, env, "source-id-column", "CONTROLS_SOURCE_ID_COLUMN") ?? "id",
    userDisabledColumn:
      str(argv, env, "source-user-disabled-column", "CONTROLS_SOURCE_USER_DISABLED_COLUMN") ??
      "user_disabled",
    adminDisabledColumn:
      str(argv, env, "source-admin-disabled-column", "CONTROLS_SOURCE_ADMIN_DISABLED_COLUMN") ??
      "admin_disabled",
    batchSize: num(argv, env, "batch-size", "CONTROLS_BATCH_SIZE", 1000, {
      min: 1,
      max: 100_000,
      integer: true,
    }),
    nonUuidIds,
  });
}

const LOOPBACK_HOSTS = new Set(["localhost", "[::1]", "::1"]);

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(hostname: string): boolean {
  if (LOOPBACK_HOSTS.has(hostname)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** Parses and checks an endpoint URL: https anywhere, http only on loopback. */
export function checkUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UserError(`${source} is not a valid URL: "${value}".`);
  }
  if (url.protocol === "https:") return url.toString().replace(/\/$/, "");
  if (url.protocol === "http:") {
    if (isLoopbackHost(url.hostname)) return url.toString().replace(/\/$/, "");
    throw new UserError(
      `${source} uses plain http:// for the non-loopback host "${url.hostname}". Credentials and tokens would cross the network unencrypted; use https:// (http:// is allowed only for 127.0.0.0/8, ::1 and localhost, e.g. the sandbox).`,
    );
  }
  throw new UserError(`${source} must be an https:// URL, got protocol "${url.protocol}".`);
}

function required(value: string | undefined, flag: string, envName: string): string {
  if (value === undefined) {
    throw new UserError(`Missing --${flag} (or env ${envName}).`);
  }
  return value;
}

export function loadPlatformConfig(argv: Argv, env: Env = process.env): PlatformConfig {
  const apiUrl = checkUrl(
    required(str(argv, env, "api-url", "API_BASE_URL"), "api-url", "API_BASE_URL"),
    argv["api-url"] ? "--api-url" : "env API_BASE_URL",
  );
  const tokenUrl = checkUrl(
    required(str(argv, env, "token-url", "OAUTH_TOKEN_URL"), "token-url", "OAUTH_TOKEN_URL"),
    argv["token-url"] ? "--token-url" : "env OAUTH_TOKEN_URL",
  );
  const clientId = required(
    str(argv, env, "client-id", "OAUTH_CLIENT_ID"),
    "client-id",
    "OAUTH_CLIENT_ID",
  );
  const secretFile = pick<string>(argv, "client-secret-file");
  let secret: string | undefined;
  if (secretFile) {
    try {
      secret = readFileSync(secretFile, "utf8").trim();
    } catch (err) {
      throw new UserError(
        `--client-secret-file ${secretFile} cannot be read: ${(err as NodeJS.ErrnoException).code ?? "error"}.`,
      );
    }
    if (!secret) throw new UserError(`--client-secret-file ${secretFile} is empty.`);
  } else {
    secret = env.OAUTH_CLIENT_SECRET || undefined;
  }
  if (!secret) {
    throw new UserError(
      "Missing client secret: set env OAUTH_CLIENT_SECRET or pass --client-secret-file PATH.",
    );
  }
  return Object.freeze({
    apiUrl,
    tokenUrl,
    clientId,
    clientSecret: new Secret(secret),
    rate: num(argv, env, "rate", "CONTROLS_RATE", 40, { min: 0.1, max: 10_000 }),
    concurrency: num(argv, env, "concurrency", "CONTROLS_CONCURRENCY", 8, {
      min: 1,
      max: 256,
      integer: true,
    }),
    timeoutMs: num(argv, env, "timeout-ms", "CONTROLS_TIMEOUT_MS", 30_000, {
      min: 100,
      integer: true,
    }),
    penaltyS: num(argv, env, "penalty-s", "CONTROLS_PENALTY_S", 300, { min: 0 }),
    maxAttempts: num(argv, env, "max-attempts", "CONTROLS_MAX_ATTEMPTS", 5, {
      min: 1,
      max: 50,
      integer: true,
    }),
    retryBaseMs: num(argv, env, "retry-base-ms", "CONTROLS_RETRY_BASE_MS", 250, { min: 1 }),
    retryCapMs: num(argv, env, "retry-cap-ms", "CONTROLS_RETRY_CAP_MS", 10_000, { min: 1 }),
    tokenRps: 1,
  });
}

/** Strips the `env` key so the table can be handed to yargs. */
export function yargsOptions<T extends Record<string, OptionSpec>>(
  table: T,
): Record<keyof T, Options> {
  const out: Record<string, Options> = {};
  for (const [k, v] of Object.entries(table)) {
    const { env: _env, ...rest } = v;
    out[k] = rest;
  }
  return out as Record<keyof T, Options>;
}

// ---------------------------------------------------------------------------------------------
// plan / apply / reconcile
// ---------------------------------------------------------------------------------------------

/** The platform's reason codes; one list, shared with the client. */
export const REASON_CODE_CHOICES = REASON_CODES;

export const pipelineOptions = {
  state: spec({
    type: "string",
    choices: ["auto", "bulk", "filtered", "per-identity"],
    env: "CONTROLS_STATE",
    defaultDescription: "auto",
    describe:
      "How to read the platform's controls: bulk (list every identity, 1000 a page; proves existence), filtered (list only identities holding a SELL_ONLY; existence is checked at apply time), per-identity (one read per flagged identity; not with --prune), or auto (the cheapest per rate budget; says why).",
  }),
  out: spec({
    type: "string",
    describe: "Report folder (default reports/<run-id>/).",
  }),
  all: spec({
    type: "boolean",
    describe: "Also list in_sync rows in diff.csv.",
  }),
} as const satisfies Record<string, OptionSpec>;

export const writerOptions = {
  yes: spec({
    type: "boolean",
    describe: "Confirm the writes without a prompt (needed when not on a terminal).",
  }),
  resume: spec({
    type: "string",
    describe: "Continue an unfinished run by id (see `controls-migrate runs`).",
  }),
  "reason-code": spec({
    type: "string",
    choices: REASON_CODE_CHOICES as unknown as string[],
    env: "CONTROLS_REASON_CODE",
    defaultDescription: "OTHER",
    describe: "reason_code of the controls created.",
  }),
  reason: spec({
    type: "string",
    env: "CONTROLS_REASON",
    defaultDescription: "controls-migrate: migrated from legacy user_disabled",
    describe: "Free-text reason of the controls created (and of prune deletions).",
  }),
} as const satisfies Record<string, OptionSpec>;

export interface PipelineConfig {
  readonly state: "auto" | "bulk" | "filtered" | "per-identity";
  readonly out: string | undefined;
  readonly all: boolean;
  readonly yes: boolean;
  readonly resume: string | undefined;
  readonly plan: string | undefined;
  readonly limit: number | undefined;
  readonly prune: boolean;
  readonly reasonCode: string;
  readonly reason: string;
}

export function loadPipelineConfig(argv: Argv, env: Env = process.env): PipelineConfig {
  const state = str(argv, env, "state", "CONTROLS_STATE") ?? "auto";
  if (!["auto", "bulk", "filtered", "per-identity"].includes(state)) {
    throw new UserError(
      `env CONTROLS_STATE must be auto, bulk, filtered or per-identity, got "${state}".`,
    );
  }
  const reasonCode = str(argv, env, "reason-code", "CONTROLS_REASON_CODE") ?? "OTHER";
  if (!(REASON_CODE_CHOICES as readonly string[]).includes(reasonCode)) {
    throw new UserError(
      `env CONTROLS_REASON_CODE must be one of ${REASON_CODE_CHOICES.join(", ")}, got "${reasonCode}".`,
    );
  }
  const limitRaw = pick<number>(argv, "limit");
  if (limitRaw !== undefined && (!Number.isInteger(limitRaw) || limitRaw < 1)) {
    throw new UserError(`--limit must be a whole number of at least 1, got ${limitRaw}.`);
  }
  const resume = pick<string>(argv, "resume");
  const plan = pick<string>(argv, "plan");
  if (resume && plan)
    throw new UserError(
      "--resume and --plan cannot be combined: a resumed run already has its actions.",
    );
  return Object.freeze({
    state: state as PipelineConfig["state"],
    out: pick<string>(argv, "out"),
    all: bool(argv, "all", false),
    yes: bool(argv, "yes", false),
    resume,
    plan,
    limit: limitRaw,
    prune: bool(argv, "prune", false),
    reasonCode,
    reason:
      str(argv, env, "reason", "CONTROLS_REASON") ??
      "controls-migrate: migrated from legacy user_disabled",
  });
}
