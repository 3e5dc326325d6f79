/**
 * A run is bound to the settings it started with (issue 26 §2), each written once in
 * `config/run-settings-table.ts`: rate, concurrency, state strategy, limit, pause window, throttle
 * file, reason, reason code, prune, and whether it waits for the platform's own migration (issue
 * 27). They are recorded with the run
 * (`runs.options`, secret-free; read back through `recordedSettings`), and `--resume` restores
 * every one the invocation does not give again (by flag or env var).
 *
 * Given again with another value: rate and concurrency change, as `set-rate` changes the rate (a
 * notice in the log and `settings_changed_at_resume` in summary.json); any other setting is
 * refused naming both values, since it would change what the run means half-way (another reason
 * on half the controls, another limit than the one approved). Pure, but for `recordSettingChanges`.
 */
import {
  type RecordedSettings,
  RUN_SETTING_KEYS,
  RUN_SETTINGS,
  type RunConfigs,
  type RunSettingKey,
  runSettingFlag,
} from "../../config.ts";
import type { DatabaseHandle } from "../../db/connection/connect.ts";
import { currentRequester, requestRunControl } from "../../db/journal/run-control-queries.ts";
import { saveRunOptions } from "../../db/journal/run-options-query.ts";
import { getRun } from "../../db/journal/run-queries.ts";
import type { Logger } from "../../log.ts";

export type { RecordedSettings };

/** A rate or concurrency given anew at resume: what the run had and what it goes on with. */
export interface SettingChange {
  readonly setting: "rate" | "concurrency";
  readonly flag: string;
  readonly was: number;
  readonly now: number;
}

/**
 * The settings a run recorded (`runs.options`, JSON text or object); a value of the wrong type
 * (hand-edited, or an older version's) is dropped rather than trusted.
 */
export function recordedSettings(options: unknown): RecordedSettings {
  const raw = typeof options === "string" ? JSON.parse(options) : options;
  const out: Record<string, unknown> = {};
  for (const key of RUN_SETTING_KEYS) {
    const parsed = RUN_SETTINGS[key].recorded.safeParse(raw?.[key]);
    if (parsed.success && parsed.data !== undefined) out[key] = parsed.data;
  }
  return out as RecordedSettings;
}

const show = (v: unknown) => (v === undefined ? "(none)" : JSON.stringify(v));

/**
 * This invocation's configs with the run's settings restored where not given again; the rate and
 * concurrency given anew (`changes`); and the other settings given with another value
 * (`conflicts`, one sentence each naming both values). `given` holds the keys given by flag or env.
 *
 * @example
 *   restoreSettings({ rate: 5 }, configs, new Set()).configs.platform.rate // 5
 */
export function restoreSettings(
  recorded: RecordedSettings,
  configs: RunConfigs,
  given: ReadonlySet<RunSettingKey>,
): { configs: RunConfigs; changes: SettingChange[]; conflicts: string[] } {
  const platform: Record<string, unknown> = { ...configs.platform };
  const pipeline: Record<string, unknown> = { ...configs.pipeline };
  const changes: SettingChange[] = [];
  const conflicts: string[] = [];
  for (const key of RUN_SETTING_KEYS) {
    const def = RUN_SETTINGS[key];
    const target = def.in === "platform" ? platform : pipeline;
    const was = recorded[key];
    if (!given.has(key)) {
      // A setting the run did not record was unset (no --limit), i.e. this invocation's default.
      if (key in recorded) target[key] = was;
      continue;
    }
    const now = target[key];
    // A rate (or wait) the run did not record: a run of an older version; the invocation's stands.
    if (!(key in recorded) && "always" in def) continue;
    if (show(was) === show(now)) continue;
    if (def.changeable && typeof was === "number" && typeof now === "number") {
      const setting = key as SettingChange["setting"];
      changes.push({ setting, flag: runSettingFlag(key), was, now });
    } else {
      conflicts.push(
        `${runSettingFlag(key)}: the run's ${show(was)}, this invocation's ${show(now)}`,
      );
    }
  }
  return {
    configs: Object.freeze({
      ...configs,
      platform: Object.freeze(platform) as unknown as RunConfigs["platform"],
      pipeline: Object.freeze(pipeline) as unknown as RunConfigs["pipeline"],
    }),
    changes,
    conflicts,
  };
}

/** The notice of one change, for the log. */
export function describeSettingChange(runId: string, c: SettingChange): string {
  const unit = c.setting === "rate" ? " requests/s" : " requests in flight";
  return `Run ${runId} resumes with ${c.flag} ${c.now}${unit} (it ran with ${c.was}), as set-rate would change it.`;
}

/** summary.json's `settings_changed_at_resume`: one entry a setting. */
export function settingChangesForSummary(changes: readonly SettingChange[]) {
  return changes.map((c) => ({ setting: c.setting, flag: c.flag, was: c.was, now: c.now }));
}

/**
 * Records the rate and concurrency a resume changed: in the run's options (a later resume restores
 * them) and, for the rate, as a `set-rate` does (the run's control row wins over `--rate` once
 * the run is going, so a resume's own rate must be written there too).
 */
export async function recordSettingChanges(
  deps: { readonly handle: DatabaseHandle; readonly logger: Logger },
  runId: string,
  changes: readonly SettingChange[],
): Promise<void> {
  if (changes.length === 0) return;
  const db = deps.handle.db;
  const run = await getRun(db, runId);
  const options = typeof run?.options === "string" ? JSON.parse(run.options) : run?.options;
  const updated: Record<string, unknown> = { ...(options ?? {}) };
  for (const c of changes) {
    updated[c.setting] = c.now;
    deps.logger.warn(describeSettingChange(runId, c));
  }
  await saveRunOptions(db, runId, updated);
  const rate = changes.find((c) => c.setting === "rate");
  if (rate) {
    await requestRunControl(db, runId, { kind: "set_rate", rate: rate.now }, currentRequester());
  }
}
