/**
 * Reader benchmark: streams a 1,000,000-row source relation on PostgreSQL through `readSource` and
 * prints one JSON line with throughput and memory. The relation (`controls_bench.identities` in the
 * database of BENCH_DATABASE_URL, else TEST_DATABASE_URL) is seeded on first use and reused after.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node test/bench/reader.ts
 *
 * Optional: BENCH_ROWS (default 1000000), BENCH_BATCH_SIZE (default 1000).
 */
import { sql } from "kysely";
import { loadSourceConfig } from "../../src/config.ts";
import { createPgPool, wrapPgPool } from "../../src/db/connection/connect.ts";
import { seedSource } from "../../src/db/source/seed.ts";
import { readSource } from "../../src/db/source/source-reader.ts";
import { silentLogger } from "../../src/log.ts";

const url = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
if (!url) {
  process.stderr.write("Set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL URL.\n");
  process.exit(1);
}
const rows = Number(process.env.BENCH_ROWS || 1_000_000);
const batchSize = Number(process.env.BENCH_BATCH_SIZE || 1000);
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

const handle = wrapPgPool(createPgPool(url));
try {
  const source = { ...loadSourceConfig({}, {}), relation: "controls_bench.identities", batchSize };
  await sql`create schema if not exists controls_bench`.execute(handle.db);
  const existing = await sql<{ n: number }>`select count(*) as n from controls_bench.identities`
    .execute(handle.db)
    .then((r) => r.rows[0]?.n ?? 0)
    .catch(() => 0);
  let seedSeconds: number | null = null;
  if (existing !== rows) {
    const seeded = await seedSource(handle.db, source, {
      identities: rows,
      seed: 42,
      truncate: true,
    });
    seedSeconds = seeded.seconds;
    await sql`analyze controls_bench.identities`.execute(handle.db);
  }

  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const started = performance.now();
  let read = 0;
  let flagged = 0;
  for await (const batch of readSource(handle.db, source, { logger: silentLogger })) {
    for (const r of batch.rows) {
      read++;
      if (r.valid && (r.userDisabled || r.adminDisabled)) flagged++;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  process.stdout.write(
    `${JSON.stringify({
      bench: "reader",
      backend: "postgres",
      rows: read,
      flagged,
      batch_size: batchSize,
      seconds: Math.round(seconds * 100) / 100,
      rows_per_s: Math.round(read / seconds),
      seed_seconds: seedSeconds,
      rss_before_mb: mb(rssBefore),
      peak_rss_mb: mb(peak),
      reader_added_rss_mb: mb(peak - rssBefore),
    })}\n`,
  );
} finally {
  await handle.close();
}
