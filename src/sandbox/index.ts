/**
 * The sandbox: a local emulator of the platform's interface (identity controls, exchange,
 * transfers, deposit addresses, orchestration rules). It stands apart
 * from the rest of the tool (imports nothing from platform/, migration/ or db/); only tests, the
 * demo and the `sandbox` command start it.
 */

export {
  DEFAULT_TIME_IN_FORCE,
  GTT_MIN_LEAD_MS,
  REF_ID_REUSE_AFTER_MS,
  VALID_TIME_IN_FORCE,
} from "./exchange/order-rules.ts";
export type {
  Balance,
  BalanceSeed,
  DepositAddress,
  DepositAddressSeed,
  ExtCounts,
  Metadata,
  OrchestrationRule,
  OrchestrationRuleSeed,
  Order,
  OrderSeed,
  OrderSeedResult,
  QuoteExecution,
  QuoteExecutionSeed,
  RuleEndpoint,
  SandboxExtApi,
  SyntheticDepositAddresses,
  SyntheticQuoteExecutions,
  TransferRecord,
} from "./ext-types.ts";
export {
  CRYPTO_NETWORKS,
  EXECUTION_STATUSES,
  MARKETS,
  ORDER_STATUSES,
  ORDER_TYPES,
  SeedConflictError,
  SIDES,
  TIME_IN_FORCE,
} from "./ext-types.ts";
export {
  effectiveRps,
  PLATFORM_DEFAULT_RPS,
  PLATFORM_ENDPOINT_RPS,
  RATE_LIMITED_ENDPOINTS,
} from "./gateway/endpoint-limits.ts";
export { DEFAULT_FAULTS } from "./gateway/faults.ts";
export { syntheticSeedRows } from "./identity/identity-seed.ts";
export { DECIMAL_SCALE, formatDecimal, parseDecimal } from "./input/decimal.ts";
export { startSandbox } from "./server.ts";
export { DEFAULT_LIMITS } from "./settings.ts";
export type {
  AddControlInput,
  ControlRecord,
  DriftKind,
  DuplicatePolicy,
  Faults,
  IdentityStatus,
  IdentityType,
  Integrity,
  Limits,
  PenaltyEntry,
  RequestWindowCounts,
  Sandbox,
  SandboxClient,
  SandboxOptions,
  SandboxStats,
  SeedIdentity,
  SeedOptions,
  SeedReport,
  SetBySpellingName,
} from "./types.ts";
export {
  CLIENT_CONTROL_TYPES,
  DRIFT_KINDS,
  IDENTITY_STATUSES,
  IDENTITY_TYPES,
  READ_ONLY_SCOPES,
  REASON_CODES,
  SCOPES,
  SET_BY_SPELLINGS,
} from "./types.ts";
