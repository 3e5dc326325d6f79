/**
 * The control channel of a running run (migration 0003): its desired state (`run_controls`: paused,
 * write rate budget, a version per change), the acknowledgement and report of the process running
 * it, and the events (`run_events`: who paused, continued or changed the rate, and when). Every
 * time is the database server's clock, so hosts with drifting clocks agree.
 */
import { hostname, userInfo } from "node:os";
import { type Kysely, sql } from "kysely";
import {
  type Database,
  type RunControlRow,
  type RunEvent,
  type RunEventKind,
  TOOL_TABLES,
} from "../schema.ts";

const C = TOOL_TABLES.runControls;
const E = TOOL_TABLES.runEvents;

/** Who asked: `user@host` and the process id. */
export interface Requester {
  readonly who: string;
  readonly pid: number;
}

/**
 * This process as a requester: `user@host` and its pid. A user without a name in the password
 * database (some containers) is named by uid.
 *
 * @example
 *   currentRequester() // { who: "ana@ops1", pid: 4242 }
 */
export function currentRequester(): Requester {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = `uid ${process.getuid?.() ?? "?"}`;
  }
  return { who: `${user}@${hostname()}`, pid: process.pid };
}

/** What a person can ask of a running run. */
export type ControlChange =
  | { readonly kind: "pause" }
  | { readonly kind: "continue" }
  | { readonly kind: "set_rate"; readonly rate: number };

/**
 * Records a change of a run's desired state and its event, in one transaction; returns the new
 * version, which the running process acknowledges once it applied it.
 *
 * @example
 *   const version = await requestRunControl(db, runId, { kind: "pause" }, { who: "ana@ops1", pid: 42 });
 */
export async function requestRunControl(
  db: Kysely<Database>,
  runId: string,
  change: ControlChange,
  by: Requester,
): Promise<number> {
  const paused = change.kind === "pause" ? true : change.kind === "continue" ? false : undefined;
  const rate = change.kind === "set_rate" ? change.rate : undefined;
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto(C)
      .values({ run_id: runId, paused: paused ?? false, rate_budget: rate ?? null, version: 1 })
      .onConflict((oc) =>
        oc.column("run_id").doUpdateSet({
          ...(paused === undefined ? {} : { paused }),
          ...(rate === undefined ? {} : { rate_budget: rate }),
          version: sql`${sql.ref(`${C}.version`)} + 1`,
        }),
      )
      .returning("version")
      .executeTakeFirstOrThrow();
    await trx
      .insertInto(E)
      .values({ run_id: runId, kind: change.kind, rate: rate ?? null, who: by.who, pid: by.pid })
      .execute();
    return Number(row.version);
  });
}

/**
 * A run's control row, or undefined when nobody ever steered it.
 *
 * @example
 *   const control = await getRunControl(db, runId); // { paused: true, rate_budget: 5, ... }
 */
export async function getRunControl(
  db: Kysely<Database>,
  runId: string,
): Promise<RunControlRow | undefined> {
  return db.selectFrom(C).selectAll().where("run_id", "=", runId).executeTakeFirst();
}

/**
 * The running process says it applied the run's control state up to `version`.
 *
 * @example
 *   await acknowledgeRunControl(db, runId, 3);
 */
export async function acknowledgeRunControl(
  db: Kysely<Database>,
  runId: string,
  version: number,
): Promise<void> {
  await db
    .updateTable(C)
    .set({ applied_version: version, applied_at: sql<Date>`now()` })
    .where("run_id", "=", runId)
    .where("applied_version", "<", version)
    .execute();
}

/**
 * Stores what the running process alone knows (write rate, 429s, why writes are held), for
 * `status` from another process or machine. Creates the control row if needed.
 *
 * @example
 *   await saveRunReport(db, runId, { rate_per_s: 39.8, paused: false });
 */
export async function saveRunReport(
  db: Kysely<Database>,
  runId: string,
  report: Record<string, unknown>,
): Promise<void> {
  const json = JSON.stringify(report);
  await db
    .insertInto(C)
    .values({ run_id: runId, report: json, reported_at: sql<Date>`now()` })
    .onConflict((oc) => oc.column("run_id").doUpdateSet({ report: json, reported_at: sql`now()` }))
    .execute();
}

/**
 * Notes the stage a running run is in (`reading the source`, `writing`, ...) in its report, the
 * rest of the report kept, its time not moved (the stage is not a fresh report of rates). Creates
 * the control row if needed.
 *
 * @example
 *   await saveRunStage(db, runId, "classifying");
 */
export async function saveRunStage(
  db: Kysely<Database>,
  runId: string,
  stage: string,
): Promise<void> {
  const json = JSON.stringify({ stage });
  await db
    .insertInto(C)
    .values({ run_id: runId, report: json })
    .onConflict((oc) =>
      oc.column("run_id").doUpdateSet({
        report: sql`coalesce(${sql.ref(`${C}.report`)}, '{}'::jsonb) || ${json}::jsonb`,
      }),
    )
    .execute();
}

/**
 * Records an event that changes no desired state: a hold by the throttle file or the time window.
 *
 * @example
 *   await recordRunEvent(db, runId, "throttle_on", { who: "ana@ops1", pid: 42 }, "/tmp/throttle exists");
 */
export async function recordRunEvent(
  db: Kysely<Database>,
  runId: string,
  kind: RunEventKind,
  by: Requester,
  detail: string | null = null,
): Promise<void> {
  await db
    .insertInto(E)
    .values({ run_id: runId, kind, who: by.who, pid: by.pid, detail })
    .execute();
}

/**
 * The latest event of a kind, or undefined (who paused a run, to say so).
 *
 * @example
 *   const pause = await lastRunEvent(db, runId, "pause");
 */
export async function lastRunEvent(
  db: Kysely<Database>,
  runId: string,
  kind: RunEventKind,
): Promise<RunEvent | undefined> {
  return db
    .selectFrom(E)
    .selectAll()
    .where("run_id", "=", runId)
    .where("kind", "=", kind)
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
}

/**
 * A run's events, oldest first.
 *
 * @example
 *   for (const e of await listRunEvents(db, runId)) console.log(e.at, e.who, e.kind);
 */
export async function listRunEvents(db: Kysely<Database>, runId: string): Promise<RunEvent[]> {
  return db.selectFrom(E).selectAll().where("run_id", "=", runId).orderBy("id").execute();
}
