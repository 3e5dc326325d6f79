/**
 * The platform's background migration (issue 27), as the sandbox plays it with
 * `--auto-migrate-rate R`: R identities a second, while the sandbox runs, each identity whose
 * legacy field is true and that holds no matching control gets one by the mapping (§9):
 * user_disabled → SELL_ONLY set_by CLIENT, overridable, reason "migrated from user_disabled";
 * admin_disabled → SELL_ONLY set_by SERVICE, not overridable, reason "migrated from
 * admin_disabled". Under `--duplicate-policy allow` it does not look again for a control created
 * since it found the identity in need (so it races a client as the real one may); under `reject`
 * it does. Progress (done, left) is on the admin surface's stats.
 */
import type { SandboxContext } from "../context.ts";
import { isClientSetBy, isServiceSetBy, type StoredIdentity } from "./identity-store.ts";

/** How often the migrator wakes; each wake does the identities its rate allows since the last. */
const TICK_MS = 50;

export const MIGRATED_REASON = {
  user_disabled: "migrated from user_disabled",
  admin_disabled: "migrated from admin_disabled",
} as const;

const holds = (identity: StoredIdentity, owner: (s: string) => boolean) =>
  identity.controls?.some(
    (c) => c.type === "SELL_ONLY" && c.deleted_at === undefined && owner(c.set_by),
  ) ?? false;

/** The fields of an identity its migration has still to turn into controls. */
function due(identity: StoredIdentity): { user: boolean; admin: boolean } {
  return {
    user: identity.user_disabled && !holds(identity, isClientSetBy),
    admin: identity.admin_disabled && !holds(identity, isServiceSetBy),
  };
}

interface Queued {
  readonly identity: StoredIdentity;
  readonly user: boolean;
  readonly admin: boolean;
}

/**
 * Starts the migrator over the context's identities; `stop` ends it. The work list is taken from
 * the store when the migrator starts and again whenever the number of identities changes (a seed).
 *
 * @example
 *   const migrator = startAutoMigrate(ctx, 50);
 *   // ... later
 *   migrator.stop();
 */
export function startAutoMigrate(ctx: SandboxContext, rate: number): { stop(): void } {
  const store = ctx.identities;
  const progress = ctx.autoMigrate;
  progress.rate = rate;
  let queue: Queued[] = [];
  let next = 0;
  let seenCount = -1;
  let budget = 0;
  let last = Date.now();

  const rebuild = () => {
    queue = [];
    next = 0;
    for (const identity of store.identities.all()) {
      const d = due(identity);
      if (d.user || d.admin) queue.push({ identity, ...d });
    }
    seenCount = store.identityCount;
    progress.left = queue.length;
  };

  const migrate = ({ identity, user, admin }: Queued) => {
    const look = ctx.limits.duplicatePolicy === "reject";
    if (user && !(look && holds(identity, isClientSetBy))) {
      store.insertControl(identity, sellOnly(ctx.setBy.client, true, "user_disabled"), {
        touch: true,
      });
    }
    if (admin && !(look && holds(identity, isServiceSetBy))) {
      store.insertControl(identity, sellOnly(ctx.setBy.service, false, "admin_disabled"), {
        touch: true,
      });
    }
    progress.done++;
  };

  const tick = () => {
    const now = Date.now();
    budget = Math.min(budget + ((now - last) / 1000) * rate, Math.max(1, rate));
    last = now;
    if (store.identityCount !== seenCount) rebuild();
    while (budget >= 1 && next < queue.length) {
      migrate(queue[next++] as Queued);
      budget -= 1;
    }
    progress.left = queue.length - next;
  };

  const timer = setInterval(tick, TICK_MS);
  timer.unref();
  tick();
  return {
    stop() {
      clearInterval(timer);
    },
  };
}

function sellOnly(setBy: string, isOverridable: boolean, flag: keyof typeof MIGRATED_REASON) {
  return {
    type: "SELL_ONLY",
    set_by: setBy,
    is_overridable: isOverridable,
    reason_code: flag === "admin_disabled" ? "ADMINISTRATIVE" : "OTHER",
    reason: MIGRATED_REASON[flag],
  };
}
