import type { Argv, CommandModule } from "yargs";
import {
  type Argv as ConfigArgv,
  loadSeedConfig,
  loadSourceConfig,
  seedOptions,
  sourceOptions,
  withOptions,
} from "../config.ts";
import { openDatabase } from "../db/connection/connect.ts";
import { migrateToLatest } from "../db/connection/migrate.ts";
import { TOOL_SCHEMA } from "../db/schema.ts";
import { type SeedResult, seedSource } from "../db/source/seed.ts";
import { ExitCode } from "../errors.ts";
import { exitCodesEpilogue } from "./exit-codes.ts";
import { runCommand } from "./run-command.ts";
import { NAME_A_DB_COMMAND } from "./usage-error.ts";

const PROGRESS_EVERY_MS = 3000;

/** Seeding writes the relation: the reader's page size and id policy do not apply. */
const seedSourceOptions = (({ batchSize: _b, nonUuidIds: _n, ...rest }) => rest)(sourceOptions);

const migrateCommand: CommandModule = {
  command: "migrate",
  describe: `Create or update the tool's own tables (schema ${TOOL_SCHEMA}). Idempotent.`,
  builder: (y: Argv) =>
    y
      .example("$0 db migrate", "Migrate the embedded database in .data/pglite")
      .example(
        "$0 db migrate --database-url postgres://user@host/db",
        "Migrate a PostgreSQL database",
      )
      .epilogue(exitCodesEpilogue("db migrate")),
  handler: (argv) =>
    runCommand(argv as ConfigArgv, async ({ global, logger }) => {
      const handle = await openDatabase(global, logger);
      try {
        const { applied, known } = await migrateToLatest(handle.db, logger);
        if (global.json) {
          process.stdout.write(`${JSON.stringify({ backend: handle.backend, applied, known })}\n`);
        } else if (applied.length === 0) {
          process.stdout.write(
            `Database schema is up to date (${plural(known, "migration")}); nothing applied.\n`,
          );
        } else {
          process.stdout.write(
            `Applied ${plural(applied.length, "migration")}: ${applied.join(", ")}. Database schema is up to date (${plural(known, "migration")}).\n`,
          );
        }
        return ExitCode.ok;
      } finally {
        await handle.close();
      }
    }),
};

const seedCommand: CommandModule = {
  command: "seed",
  describe:
    "Fill the source relation with deterministic synthetic identities (for trials and tests). Creates it if missing.",
  builder: (y: Argv) =>
    withOptions(withOptions(y, seedOptions, "Seed options:"), seedSourceOptions, "Source options:")
      .example(
        "$0 db seed --identities 100000 --seed 7",
        "100,000 identities into table identities (embedded DB)",
      )
      .example(
        "$0 db seed --identities 1000 --with-anomalies --truncate --json",
        "Replace the rows, add bad rows, print JSON",
      )
      .example(
        "$0 db seed --identities 1000000 --database-url postgres://user@host/db",
        "A million rows on PostgreSQL",
      )
      .epilogue(exitCodesEpilogue("db seed")),
  handler: (argv) =>
    runCommand(argv as ConfigArgv, async ({ argv, global, logger, signal }) => {
      const source = loadSourceConfig(argv);
      const { identities, seed, withAnomalies, truncate } = loadSeedConfig(argv);
      const handle = await openDatabase(global, logger);
      try {
        let lastReport = Date.now();
        const result = await seedSource(handle.db, source, {
          identities,
          seed,
          withAnomalies,
          truncate,
          signal,
          onProgress: (written) => {
            if (!global.progress || Date.now() - lastReport < PROGRESS_EVERY_MS) return;
            lastReport = Date.now();
            logger.info(`Seeding: ${written} of ${identities} rows written`);
          },
        });
        process.stdout.write(
          global.json
            ? `${JSON.stringify({ backend: handle.backend, ...result })}\n`
            : describeSeed(result),
        );
        return ExitCode.ok;
      } finally {
        await handle.close();
      }
    }),
};

/** `db migrate` and `db seed`. */
export const dbCommand: CommandModule = {
  command: "db",
  describe: "Manage the tool's database (migrate) and seed a synthetic source relation (seed).",
  builder: (y: Argv) =>
    y.command(migrateCommand).command(seedCommand).demandCommand(1, NAME_A_DB_COMMAND),
  handler: () => {},
};

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function describeSeed(r: SeedResult): string {
  const c = r.combinations;
  const lines = [
    `Seeded ${r.identities} identities (seed ${r.seed}) into ${r.relation}${r.created ? " (created)" : ""}${r.truncated ? `, replacing ${r.truncated} rows` : ""} in ${r.seconds} s.`,
    `  both flags:          ${c.both}`,
    `  user_disabled only:  ${c.userOnly}`,
    `  admin_disabled only: ${c.adminOnly}`,
    `  neither:             ${c.neither}`,
  ];
  const kinds = Object.entries(r.anomalies);
  if (kinds.length > 0) {
    const total = kinds.reduce((s, [, n]) => s + n, 0);
    lines.push(
      `  anomalous rows:      ${total} (${kinds.map(([k, n]) => `${k} ${n}`).join(", ")})`,
    );
  }
  return `${lines.join("\n")}\n`;
}
