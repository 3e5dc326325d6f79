/**
 * When an identity's `updated_at` moves, under the sandbox's `updatedAtPolicy` (issue 55). The
 * platform does not publish what moves it, so the sandbox plays both an honest and a dishonest
 * platform: a reconcile that reads only what changed can be rehearsed against each.
 */
import type { UpdatedAtPolicy } from "./types.ts";

export type { UpdatedAtPolicy };

/** What changed on a live identity: one of its controls, or one of its own fields (legacy ones). */
export type IdentityChange = "control" | "identity-field";

/**
 * Whether a change moves updated_at: `all` every change, `identity-fields` only the identity's own
 * fields, `none` nothing.
 *
 * @example
 *   movesUpdatedAt("identity-fields", "control"); // false
 */
export function movesUpdatedAt(policy: UpdatedAtPolicy, change: IdentityChange): boolean {
  if (policy === "all") return true;
  return policy === "identity-fields" && change === "identity-field";
}

/** updated_at never precedes created_at, even for an identity seeded with a future created_at. */
export function touch(
  identity: { readonly createdAtMs: number; updatedAtMs: number | undefined },
  nowMs: number,
): void {
  identity.updatedAtMs = Math.max(nowMs, identity.createdAtMs);
}
