/**
 * Storing a batch of classified findings: the findings themselves and, for writers, the journal's
 * pending actions that point at them, in one idempotent statement after the batch's other writes
 * (`storeClassified`, with its column types `FINDING_COLUMNS` and the action row `PendingActionOf`).
 * The findings' reads and the invalid-row findings are in `finding-queries.ts`.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import { type Database, type NewFinding, TOOL_TABLES } from "../schema.ts";
import { arrayParam, chainWrites, type UnnestType } from "./unnest-insert.ts";

/** A pending action to journal with the finding it comes from (see `storeClassified`). */
export interface PendingActionOf {
  readonly identity_id: string;
  /** The finding it comes from: its kind and observed control (null for a missing control). */
  readonly finding: string;
  readonly observed_control_id: string | null;
  readonly action: "create" | "delete";
  readonly control_type: string;
  readonly control_key: string;
}

/**
 * Stores findings and, for writers, the journal's pending actions that point at them, after the
 * writes `before` (see `chainWrites`): all in ONE statement, so a batch needs one round trip and
 * no transaction. Idempotent, so the statement can be sent again after a lost connection: the
 * batch's findings commit together or not at all, so none is inserted once its first identity is
 * classified in this run (every batch holds identities not classified yet), and an action only
 * once. An action finds its finding by
 * identity, kind and observed control, which tells an identity's findings apart wherever an
 * action comes from one. Returns the actions journaled.
 *
 * @example
 *   const actions = await storeClassified(db, snapshotWrites(ids, controls), findings, pending);
 */
export async function storeClassified(
  db: Kysely<Database>,
  before: readonly RawBuilder<unknown>[],
  findings: readonly NewFinding[],
  actions: readonly PendingActionOf[],
): Promise<number> {
  if (findings.length === 0) {
    await chainWrites(before)?.execute(db);
    return 0;
  }
  // The batch's findings commit together, so one of its identities tells whether a statement
  // whose answer was lost had committed: one index probe, not one a row.
  const runId = findings[0]?.run_id as string;
  const sentinel = findings[0]?.identity_id ?? null;
  const names = Object.keys(FINDING_COLUMNS) as (keyof typeof FINDING_COLUMNS)[];
  const arrays = names.map((name) =>
    arrayParam(
      findings.map((f) => (name === "prunable" ? (f.prunable ?? false) : f[name])),
      FINDING_COLUMNS[name],
    ),
  );
  const columns = sql.join(names.map((n) => sql.ref(n)));
  // The inserted findings come back only for the actions to point at: a plan's page, which
  // journals none, is not sent 100-odd rows it would throw away (about 1 ms a page on PGlite).
  const returning =
    actions.length > 0 ? sql`returning id, identity_id, finding, observed_control_id` : sql``;
  const insertFindings = sql`insert into ${sql.table(TOOL_TABLES.findings)} (${columns})
    select u.* from unnest(${sql.join(arrays)}) as u(${columns})
    where not exists (select 1 from ${sql.table(TOOL_TABLES.findings)} g
                      where g.run_id = ${runId} and g.identity_id = ${sentinel}
                        and g.finding not in ('invalid_source_row', 'source_warning'))
    ${returning}`;
  const ctes = before.map((w, i) => sql`${sql.raw(`w${i}`)} as (${w})`);
  if (actions.length === 0) {
    await (ctes.length === 0
      ? insertFindings
      : sql`with ${sql.join(ctes)} ${insertFindings}`
    ).execute(db);
    return 0;
  }
  const col = <K extends keyof PendingActionOf>(k: K) => actions.map((a) => a[k]);
  const r = await sql`
    with ${sql.join([...ctes, sql`f as (${insertFindings})`])}
    insert into ${sql.table(TOOL_TABLES.actions)}
      (run_id, identity_id, finding_id, action, control_type, control_key, status)
    select ${runId}, a.identity_id, f.id, a.action, a.control_type, a.control_key, 'pending'
    from unnest(${arrayParam(col("identity_id"), "text")}, ${arrayParam(col("finding"), "text")},
                ${arrayParam(col("observed_control_id"), "text")}, ${arrayParam(col("action"), "text")},
                ${arrayParam(col("control_type"), "text")}, ${arrayParam(col("control_key"), "text")})
         as a(identity_id, finding, observed_control_id, action, control_type, control_key)
    join f on f.identity_id = a.identity_id and f.finding = a.finding
          and f.observed_control_id is not distinct from a.observed_control_id
    on conflict (run_id, identity_id, action, control_key) do nothing`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

const FINDING_COLUMNS = {
  run_id: "text",
  identity_id: "text",
  finding: "text",
  user_disabled: "bool",
  admin_disabled: "bool",
  expected_type: "text",
  expected_set_by: "text",
  expected_is_overridable: "bool",
  observed_control_id: "text",
  observed_set_by: "text",
  observed_is_overridable: "bool",
  other_active_controls: "text",
  detail: "text",
  platform_user_disabled: "bool",
  platform_admin_disabled: "bool",
  prunable: "bool",
} as const satisfies Record<Exclude<keyof NewFinding, "id">, UnnestType>;
