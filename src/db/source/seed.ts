/**
 * `db seed`: fills a source relation with deterministic synthetic identities (the same ones the
 * sandbox serves for the same count and seed), optionally with a handful of every bad-row kind.
 */
import { type Kysely, sql } from "kysely";
import type { SourceConfig } from "../../config.ts";
import { prng, syntheticIdentities, uuidFrom } from "../../contract/index.ts";
import { UserError } from "../../errors.ts";
import { MAX_ID_LENGTH } from "./source-anomalies.ts";
import {
  type ResolvedSource,
  resolveSource,
  SOURCE_FLAGS,
  splitRelation,
} from "./source-relation.ts";

// biome-ignore lint/suspicious/noExplicitAny: the source relation is the user's, not in our types
type AnyDb = Kysely<any>;

export interface SeedOptions {
  readonly identities: number;
  readonly seed: number;
  readonly withAnomalies?: boolean;
  /** Empty the relation first; without it a relation that already has rows is refused. */
  readonly truncate?: boolean;
  readonly signal?: AbortSignal;
  onProgress?(rowsWritten: number): void;
}

/** Counts of the synthetic rows per flag combination. */
export interface FlagCombinations {
  both: number;
  userOnly: number;
  adminOnly: number;
  neither: number;
}

export interface SeedResult {
  readonly relation: string;
  readonly created: boolean;
  readonly truncated: number;
  readonly identities: number;
  readonly seed: number;
  readonly combinations: FlagCombinations;
  /** Anomalous rows added by `withAnomalies`, by the kind the reader will report. */
  readonly anomalies: Record<string, number>;
  readonly rowsWritten: number;
  readonly seconds: number;
}

interface SeedRow {
  id: string | null;
  ud: boolean | null;
  ad: boolean | null;
}

const INSERT_BATCH = 20_000;
const TEXT_TYPES = new Set(["text", "character varying", "character", "name"]);

/**
 * Creates the source relation if missing (`id text, user_disabled boolean, admin_disabled boolean,
 * created_at timestamptz`, indexed on id, deliberately without a primary key so duplicate ids can
 * be seeded) and inserts `syntheticIdentities(identities, seed)` in one transaction, 20,000 rows per
 * `insert ... select from unnest(arrays)` statement.
 *
 * @example
 *   const r = await seedSource(db, source, { identities: 100_000, seed: 7 });
 *   r.combinations.both // identities with both flags set
 */
export async function seedSource(
  db: AnyDb,
  source: SourceConfig,
  opts: SeedOptions,
): Promise<SeedResult> {
  if (!Number.isInteger(opts.identities) || opts.identities < 0) {
    throw new UserError(`--identities must be a whole number ≥ 0, got ${opts.identities}.`);
  }
  const started = performance.now();
  const created = await createIfMissing(db, source);
  const src = await seedableTable(db, source);
  const idIsUuid = src.id.type === "uuid";

  return db.transaction().execute(async (trx) => {
    const truncated = await emptyOrRefuse(trx, src, opts.truncate === true);
    const rows = batchInserter(trx, src, opts);
    const combinations: FlagCombinations = { both: 0, userOnly: 0, adminOnly: 0, neither: 0 };
    for (const s of syntheticIdentities(opts.identities, opts.seed)) {
      if (s.user_disabled && s.admin_disabled) combinations.both++;
      else if (s.user_disabled) combinations.userOnly++;
      else if (s.admin_disabled) combinations.adminOnly++;
      else combinations.neither++;
      await rows.add({ id: s.id, ud: s.user_disabled, ad: s.admin_disabled });
    }
    const anomalies: Record<string, number> = {};
    if (opts.withAnomalies) {
      for (const { kind, row } of anomalyRows(opts.seed, idIsUuid)) {
        anomalies[kind] = (anomalies[kind] ?? 0) + 1;
        await rows.add(row, false);
      }
    }
    await rows.flush();
    return {
      relation: src.display,
      created,
      truncated,
      identities: opts.identities,
      seed: opts.seed,
      combinations,
      anomalies,
      rowsWritten: rows.written(),
      seconds: Math.round((performance.now() - started) / 10) / 100,
    };
  });
}

/** The resolved source, refused unless it is a table whose id column can take UUIDs. */
async function seedableTable(db: AnyDb, source: SourceConfig): Promise<ResolvedSource> {
  const src = await resolveSource(db, source);
  if (!["r", "p"].includes(src.kind)) {
    throw new UserError(
      `"${src.display}" is not a table; db seed writes only to tables (${SOURCE_FLAGS.relation}).`,
    );
  }
  if (src.id.type !== "uuid" && !TEXT_TYPES.has(src.id.type)) {
    throw new UserError(
      `db seed writes UUIDs, but column "${src.id.name}" of "${src.display}" has type ${src.id.type}; use a text or uuid column (${SOURCE_FLAGS.idColumn}).`,
    );
  }
  return src;
}

/** Empties a relation that holds rows when `truncate` says so, else refuses; the rows removed. */
async function emptyOrRefuse(trx: AnyDb, src: ResolvedSource, truncate: boolean): Promise<number> {
  const existing = await sql<{ n: number }>`select count(*) as n from ${src.table}`
    .execute(trx)
    .then((r) => Number(r.rows[0]?.n ?? 0));
  if (existing > 0 && !truncate) {
    throw new UserError(
      `Relation "${src.display}" already holds ${existing} rows; pass --truncate to replace them (this deletes them), or choose another ${SOURCE_FLAGS.relation}.`,
    );
  }
  if (existing > 0) await sql`truncate ${src.table}`.execute(trx);
  return existing;
}

/**
 * Rows buffered and inserted `INSERT_BATCH` at a time by one `insert ... select from unnest`
 * statement; `add(row, false)` only buffers (the anomalies go with the last batch).
 */
function batchInserter(trx: AnyDb, src: ResolvedSource, opts: SeedOptions) {
  // Casts the text/bool arrays to what the columns take; the insert's assignment cast does the rest
  // (there is no direct boolean → smallint/bigint cast, but integer → either is an assignment cast).
  const idCast = sql.raw(src.id.type === "uuid" ? "uuid" : "text");
  const flagCast = (t: string) =>
    sql.raw(t === "boolean" ? "boolean" : TEXT_TYPES.has(t) ? "text" : "integer");
  let rowsWritten = 0;
  let buffer: SeedRow[] = [];
  const flush = async () => {
    if (buffer.length === 0) return;
    opts.signal?.throwIfAborted();
    const ids = buffer.map((r) => r.id);
    const uds = buffer.map((r) => r.ud);
    const ads = buffer.map((r) => r.ad);
    await sql`
      insert into ${src.table} (${sql.id(src.id.name)}, ${sql.id(src.userDisabled.name)}, ${sql.id(src.adminDisabled.name)})
      select u.id::${idCast}, u.ud::${flagCast(src.userDisabled.type)},
             u.ad::${flagCast(src.adminDisabled.type)}
      from unnest(${ids}::text[], ${uds}::bool[], ${ads}::bool[]) as u(id, ud, ad)`.execute(trx);
    rowsWritten += buffer.length;
    buffer = [];
    opts.onProgress?.(rowsWritten);
  };
  return {
    async add(row: SeedRow, flushFull = true): Promise<void> {
      buffer.push(row);
      if (flushFull && buffer.length >= INSERT_BATCH) await flush();
    },
    flush,
    written: () => rowsWritten,
  };
}

/**
 * A few rows of every bad kind, deterministic for a seed, with ids drawn from a stream separate from
 * the synthetic identities so no clean identity is touched. On a uuid id column only the kinds a
 * uuid can carry are added.
 */
export function* anomalyRows(
  seed: number,
  idIsUuid: boolean,
): Generator<{ kind: string; row: SeedRow }> {
  const rand = prng((seed ^ 0x5eed_a110) >>> 0);
  const fresh = () => uuidFrom(rand);
  for (let i = 0; i < 3; i++) yield { kind: "null_id", row: { id: null, ud: i !== 1, ad: false } };
  for (let i = 0; i < 3; i++) {
    const id = fresh();
    // Conflicting flags on the copies: the reason no copy can be trusted.
    yield { kind: "duplicate_id", row: { id, ud: true, ad: false } };
    yield { kind: "duplicate_id", row: { id, ud: false, ad: i === 0 } };
  }
  for (let i = 0; i < 3; i++)
    yield { kind: "null_flag", row: { id: fresh(), ud: null, ad: false } };
  for (let i = 0; i < 2; i++) yield { kind: "null_flag", row: { id: fresh(), ud: true, ad: null } };
  if (idIsUuid) return;
  yield { kind: "empty_id", row: { id: "", ud: true, ad: false } };
  yield { kind: "empty_id", row: { id: "   ", ud: false, ad: true } };
  for (let i = 0; i < 3; i++)
    yield { kind: "non_uuid_id", row: { id: `legacy-${1000 + i}`, ud: true, ad: false } };
  yield { kind: "non_uuid_id", row: { id: fresh().toUpperCase(), ud: true, ad: false } };
  for (let i = 0; i < 2; i++) {
    yield {
      kind: "id_too_long",
      row: { id: fresh().repeat(Math.ceil((MAX_ID_LENGTH + 1) / 36)), ud: true, ad: false },
    };
  }
  yield { kind: "control_chars_in_id", row: { id: `${fresh()}\n`, ud: true, ad: false } };
  yield { kind: "control_chars_in_id", row: { id: `\t${fresh()}`, ud: false, ad: true } };
}

/** Creates the default-shaped relation when it does not exist (its schema must). True if created. */
async function createIfMissing(db: AnyDb, source: SourceConfig): Promise<boolean> {
  const { schema, name } = splitRelation(source.relation);
  const table = schema === undefined ? sql.id(name) : sql.id(schema, name);
  const exists = await sql<{ oid: string | null }>`select to_regclass(${
    schema === undefined
      ? sql`quote_ident(${name})`
      : sql`quote_ident(${schema}) || '.' || quote_ident(${name})`
  })::text as oid`
    .execute(db)
    .then((r) => r.rows[0]?.oid);
  if (exists) return false;
  if (schema !== undefined) {
    // A typo in the schema must not silently create a new one.
    const found = await sql<{
      n: number;
    }>`select count(*) as n from pg_namespace where nspname = ${schema}`
      .execute(db)
      .then((r) => Number(r.rows[0]?.n ?? 0));
    if (found === 0) {
      throw new UserError(
        `Schema "${schema}" of relation "${source.relation}" does not exist; create it first or fix ${SOURCE_FLAGS.relation}.`,
      );
    }
  }
  await db.transaction().execute(async (trx) => {
    await sql`create table if not exists ${table} (
      ${sql.id(source.idColumn)} text,
      ${sql.id(source.userDisabledColumn)} boolean,
      ${sql.id(source.adminDisabledColumn)} boolean,
      created_at timestamptz not null default now()
    )`.execute(trx);
    await sql`create index if not exists ${sql.id(`${name}_${source.idColumn}_idx`.slice(0, 63))}
      on ${table} (${sql.id(source.idColumn)})`.execute(trx);
  });
  return true;
}
