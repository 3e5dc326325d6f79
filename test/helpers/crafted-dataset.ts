/**
 * The crafted dataset of the end-to-end tests: a source relation and a platform that together
 * give every finding category (the comment on each row says which), shared so that tests of
 * different strategies compare like with like.
 *
 * @example
 *   craftPlatform(sandbox);
 *   await seedCraftedSource(handle.db);
 */

import type { Sandbox } from "controls-sandbox";
import { type Kysely, sql } from "kysely";
import { prng, uuidFrom } from "../../src/contract/index.ts";
import type { Database } from "../../src/db/schema.ts";

const rand = prng(4242);
const id = () => uuidFrom(rand);
export const ids = Object.fromEntries(
  "ABCDEFGHIJKLMNOQRST".split("").map((k) => [k, id()]),
) as Record<string, string>;

/** [key, user_disabled, admin_disabled] rows of the crafted source relation. */
export const SOURCE: [string, boolean | null, boolean][] = [
  ["A", true, false], // no control → missing_client_control
  ["B", true, false], // CLIENT SELL_ONLY → in_sync
  ["C", false, true], // nothing → missing_service_control
  ["D", false, true], // SERVICE SELL_ONLY → in_sync
  ["E", false, false], // CLIENT SELL_ONLY overridable → unexpected_client_control (prunable)
  ["F", false, false], // SERVICE SELL_ONLY → unexpected_service_control
  ["G", true, false], // CLIENT SELL_ONLY not overridable → attribute_mismatch
  ["H", true, false], // set_by WEIRD → attribute_mismatch
  ["I", true, false], // unknown to the platform → identity_not_found
  ["K", null, false], // NULL flag → invalid_source_row
  ["L", true, false], // SET_BY_CLIENT spelling → in_sync
  ["M", true, false], // only FROZEN → missing_client_control, FROZEN shown
  ["N", true, false], // deleted CLIENT SELL_ONLY → missing_client_control
  ["O", true, false], // two CLIENT SELL_ONLY → in_sync + unexpected_client_control
  ["Q", false, false], // CLIENT SELL_ONLY not overridable → unexpected_client_control (not prunable)
  ["R", true, false], // only SERVICE SELL_ONLY → missing_client_control + unexpected_service_control
  ["S", false, true], // only CLIENT SELL_ONLY → missing_service_control + unexpected_client_control (kept)
  ["T", false, true], // SERVICE + CLIENT SELL_ONLY → in_sync + unexpected_client_control (prunable)
];

export function craftPlatform(sandbox: Sandbox): void {
  const onPlatform = SOURCE.filter(([k]) => k !== "I" && k !== "K").map(([k, u, a]) => ({
    id: ids[k]!,
    user_disabled: Boolean(u),
    admin_disabled: a,
  }));
  onPlatform.push({ id: ids.J!, user_disabled: true, admin_disabled: false });
  sandbox.seedIdentities(onPlatform, { migratedFraction: 0, driftFraction: 0 });
  const add = (
    k: string,
    set_by: string,
    is_overridable: boolean,
    type = "SELL_ONLY",
    deleted = false,
  ) => sandbox.addControl(ids[k]!, { type, set_by, is_overridable, deleted });
  add("B", "CLIENT", true);
  add("D", "SERVICE", false);
  add("E", "CLIENT", true);
  add("F", "SERVICE", false);
  add("G", "CLIENT", false);
  add("H", "WEIRD", true);
  add("J", "CLIENT", true); // J has no source row → unknown_to_source
  add("L", "SET_BY_CLIENT", true);
  add("M", "SERVICE", false, "FROZEN");
  add("N", "CLIENT", true, "SELL_ONLY", true);
  add("O", "CLIENT", true);
  add("O", "CLIENT", true);
  add("Q", "CLIENT", false);
  add("R", "SERVICE", false);
  add("S", "CLIENT", true);
  add("T", "SERVICE", false);
  add("T", "CLIENT", true);
}

/** Each count that changed with issue 10 is explained in CHANGELOG.md ("Unreleased"). */
export const EXPECTED_FINDINGS = {
  in_sync: 5,
  // Not waiting for the platform (`--no-wait-for-platform`, as the test helpers' CLI children).
  missing_client_control: 4,
  // The sandbox's legacy admin_disabled equals the source's: the platform will migrate them.
  missing_service_control: 0,
  awaiting_platform_migration: 2,
  platform_will_restrict: 0,
  duplicate_client_control: 1,
  platform_unaware_of_admin_flag: 0,
  source_behind_platform: 0,
  unexpected_client_control: 4,
  unexpected_service_control: 2,
  attribute_mismatch: 2,
  identity_not_found: 1,
  unknown_to_source: 1,
  invalid_source_row: 1,
  source_warning: 0,
  read_failed: 0,
  orphaned_own_control: 0,
  contested: 0,
  stale_incremental: 0,
};

/** Creates `identities (id, user_disabled, admin_disabled)` holding the crafted source rows. */
export async function seedCraftedSource(db: Kysely<Database>): Promise<void> {
  await sql`create table identities (id text, user_disabled boolean, admin_disabled boolean)`.execute(
    db,
  );
  for (const [k, u, a] of SOURCE) {
    await sql`insert into identities values (${ids[k]!}, ${u}, ${a})`.execute(db);
  }
}
