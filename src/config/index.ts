/**
 * Configuration: the options table (`options.ts`, `command-options.ts`, `seed-demo-options.ts`),
 * the loaders that compile flags, env vars and defaults into frozen objects (`load.ts`), the URL
 * policy (`url-policy.ts`), and what is generated from the table: yargs options and help
 * (`yargs-options.ts`), README's table (`readme-table.ts`).
 */
// Every per-command options table is public: a new one needs no line here.
export * from "./command-options.ts";
export { connectionFlags, givenRunSettings } from "./given-options.ts";
export {
  type Argv,
  type DemoConfig,
  type Env,
  type GlobalConfig,
  type HoldConfig,
  loadDemoConfig,
  loadGlobalConfig,
  loadPipelineConfig,
  loadPlatformConfig,
  loadReportConfig,
  loadRunConfigs,
  loadRunsConfig,
  loadSeedConfig,
  loadShowConfig,
  loadSourceConfig,
  type NonUuidPolicy,
  type PipelineConfig,
  type PlatformConfig,
  type ReportConfig,
  type RunConfigs,
  type RunsConfig,
  rateCeilingProblem,
  type SeedConfig,
  type ShowConfig,
  type SourceConfig,
} from "./load.ts";
export {
  loadRevertConfigs,
  loadSetRate,
  loadStatusConfig,
  type RevertConfig,
  type RevertConfigs,
  type StatusConfig,
} from "./load-run-control.ts";
export type { OptionDef, OptionGroup, OptionTable } from "./option-def.ts";
export {
  globalOptions,
  PLATFORM_RATE_LIMIT_RPS,
  platformOptions,
  sourceOptions,
} from "./options.ts";
export {
  type RecordedSettings,
  RUN_SETTING_KEYS,
  RUN_SETTINGS,
  type RunSettingKey,
  runSettingFlag,
} from "./run-settings-table.ts";
export * from "./seed-demo-options.ts";
export * from "./since-last-options.ts";
export { isLoopbackHost, isPostgresUrl, judgeEndpointUrl } from "./url-policy.ts";
export { flagsOf, helpWidth, withOptions, yargsOptions } from "./yargs-options.ts";
