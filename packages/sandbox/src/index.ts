/**
 * The sandbox: a local emulator of the platform's interface (identity controls, exchange,
 * transfers, deposit addresses, orchestration rules). It stands apart from the rest of the tool
 * (it imports only the CLI's contract and option kit, through `shared.ts`); only tests, the demo and the `controls-sandbox` bin
 * start it.
 */

export { runSandboxCli, sandboxYargs, stopSignal } from "./cli/main.ts";
export {
  type SandboxCliOptions,
  SandboxUsageError,
  sandboxOptions,
  sandboxOptionsFromArgv,
} from "./cli/options.ts";
export { exportLines, type SandboxLog, serveSandbox, stderrLog } from "./cli/serve.ts";
export type {
  DepositAddress,
  DepositAddressApi,
  DepositAddressSeed,
  SyntheticDepositAddresses,
} from "./deposit-address/types.ts";
export { CRYPTO_NETWORKS } from "./deposit-address/types.ts";
export {
  DEFAULT_TIME_IN_FORCE,
  GTT_MIN_LEAD_MS,
  REF_ID_REUSE_AFTER_MS,
  VALID_TIME_IN_FORCE,
} from "./exchange/order-rules.ts";
export type {
  ExchangeApi,
  Order,
  OrderSeed,
  OrderSeedResult,
  QuoteExecution,
  QuoteExecutionSeed,
  SyntheticQuoteExecutions,
} from "./exchange/types.ts";
export {
  EXECUTION_STATUSES,
  MARKETS,
  ORDER_STATUSES,
  ORDER_TYPES,
  SIDES,
  TIME_IN_FORCE,
} from "./exchange/types.ts";
export {
  effectiveRps,
  normalizeEndpointRates,
  PLATFORM_DEFAULT_RPS,
  PLATFORM_ENDPOINT_RPS,
  RATE_LIMITED_ENDPOINTS,
} from "./gateway/endpoint-limits.ts";
export { DEFAULT_FAULTS } from "./gateway/faults.ts";
export { syntheticSeedRows } from "./identity/identity-seed.ts";
export type {
  AddControlInput,
  ControlRecord,
  DriftKind,
  IdentityApi,
  IdentityStatus,
  IdentityType,
  Integrity,
  SeedIdentity,
  SeedOptions,
  SeedReport,
  SetBySpellingName,
  UpdatedAtPolicy,
} from "./identity/types.ts";
export {
  CLIENT_CONTROL_TYPES,
  DRIFT_KINDS,
  IDENTITY_STATUSES,
  IDENTITY_TYPES,
  REASON_CODES,
  SET_BY_SPELLINGS,
  UPDATED_AT_POLICIES,
} from "./identity/types.ts";
export { DECIMAL_SCALE, formatDecimal, parseDecimal } from "./input/decimal.ts";
export { type Metadata, SeedConflictError } from "./input/seed-input.ts";
export { DEFAULT_LIMITS } from "./options.ts";
export type {
  OrchestrationApi,
  OrchestrationRule,
  OrchestrationRuleSeed,
  RuleEndpoint,
} from "./orchestration/types.ts";
export { startSandbox } from "./start-sandbox.ts";
export type { Balance, BalanceSeed, TransferApi, TransferRecord } from "./transfer/types.ts";
export type {
  AdminApi,
  DuplicatePolicy,
  Faults,
  Limits,
  PenaltyEntry,
  RecordCounts,
  RequestWindowCounts,
  Sandbox,
  SandboxClient,
  SandboxOptions,
  SandboxStats,
} from "./types.ts";
export { READ_ONLY_SCOPES, SCOPES } from "./types.ts";
