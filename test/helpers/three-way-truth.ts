/**
 * The three-way findings a run should report, computed from the sandbox's own state and the
 * source's flags with the tables of issue 27 written out plainly (not with the tool's classifier),
 * for tests to compare the tool's counts with.
 */
import type { Sandbox } from "controls-sandbox";
import { isClient, isService } from "./platform-assertions.ts";

export interface SourceFlags {
  readonly id: string;
  readonly user_disabled: boolean;
  readonly admin_disabled: boolean;
}

/** Active SELL_ONLY controls of an identity, by owner. */
export function sellOnlyOf(sandbox: Sandbox, id: string) {
  const active = sandbox.controlsOf(id).filter((c) => c.type === "SELL_ONLY");
  return { client: active.filter(isClient), service: active.filter(isService) };
}

/** Counts of each three-way finding over identities whose SELL_ONLY are all CLIENT or SERVICE. */
export function threeWayTruth(sandbox: Sandbox, rows: Iterable<SourceFlags>) {
  const t = {
    awaiting_platform_migration: 0,
    missing_client_control: 0,
    platform_will_restrict: 0,
    unexpected_client_control_legacy: 0,
    duplicate_client_control: 0,
    platform_unaware_of_admin_flag: 0,
    source_behind_platform: 0,
  };
  for (const l of rows) {
    const p = sandbox.legacyFieldsOf(l.id);
    const { client, service } = sellOnlyOf(sandbox, l.id);
    if (l.user_disabled && p.user_disabled && client.length === 0) t.awaiting_platform_migration++;
    if (l.user_disabled && !p.user_disabled && client.length === 0) t.missing_client_control++;
    if (!l.user_disabled && p.user_disabled && client.length === 0) t.platform_will_restrict++;
    if (!l.user_disabled && p.user_disabled && client.length > 0) {
      t.unexpected_client_control_legacy++;
    }
    t.duplicate_client_control += Math.max(0, client.length - 1);
    if (l.admin_disabled && p.admin_disabled && service.length === 0) {
      t.awaiting_platform_migration++;
    }
    if (l.admin_disabled && !p.admin_disabled && service.length === 0) {
      t.platform_unaware_of_admin_flag++;
    }
    if (!l.admin_disabled && p.admin_disabled)
      t.source_behind_platform += Math.max(1, service.length);
  }
  return t;
}
