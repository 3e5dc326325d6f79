/**
 * The suite's one set of assertions about what the platform (the sandbox) holds, read from the
 * sandbox's own state, never from the tool's reports.
 */
import assert from "node:assert/strict";
import type { ControlRecord, Sandbox } from "controls-sandbox";

/** Set by the client, in either spelling the platform uses. */
export const isClient = (c: ControlRecord) => c.set_by === "CLIENT" || c.set_by === "SET_BY_CLIENT";
/** Set by the service, in either spelling the platform uses. */
export const isService = (c: ControlRecord) =>
  c.set_by === "SERVICE" || c.set_by === "SET_BY_SERVICE";

/** An identity's active CLIENT SELL_ONLY controls. */
export const clientSellOnly = (sandbox: Sandbox, id: string): ControlRecord[] =>
  sandbox.controlsOf(id).filter((c) => c.type === "SELL_ONLY" && !c.deleted_at && isClient(c));

/**
 * Asserts that each of `ids` (at least one) holds exactly one active CLIENT SELL_ONLY: none
 * missing, no duplicate. The failure names every identity that does not, with its count.
 *
 * @example assertExactlyOnce(sandbox, flaggedByClient, "after the resume");
 */
export function assertExactlyOnce(sandbox: Sandbox, ids: readonly string[], when = ""): void {
  assert.ok(ids.length > 0, `no identity to check${when ? ` ${when}` : ""}`);
  const wrong = ids
    .map((id) => [id, clientSellOnly(sandbox, id).length] as const)
    .filter(([, n]) => n !== 1);
  assert.deepEqual(wrong, [], `identities without exactly one CLIENT SELL_ONLY ${when}`.trim());
}

/** Asserts that none of `ids` (at least one) holds an active CLIENT SELL_ONLY. */
export function assertNoneRestricted(sandbox: Sandbox, ids: readonly string[], when = ""): void {
  assert.ok(ids.length > 0, `no identity to check${when ? ` ${when}` : ""}`);
  const held = ids.filter((id) => clientSellOnly(sandbox, id).length > 0);
  assert.deepEqual(held, [], `identities holding a CLIENT SELL_ONLY ${when}`.trim());
}
