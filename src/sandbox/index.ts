/**
 * The sandbox: a local emulator of the platform's identity-controls interface. It stands apart
 * from the rest of the tool (imports nothing from platform/, migration/ or db/); only tests, the
 * demo and the `sandbox` command start it.
 */
export { DEFAULT_FAULTS } from "./faults.ts";
export { syntheticSeedRows } from "./seed.ts";
export { startSandbox } from "./server.ts";
export { DEFAULT_LIMITS } from "./settings.ts";
export type {
  AddControlInput,
  ControlRecord,
  DriftKind,
  DuplicatePolicy,
  Faults,
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
} from "./types.ts";
export { CLIENT_CONTROL_TYPES, DRIFT_KINDS, REASON_CODES, SCOPES } from "./types.ts";
