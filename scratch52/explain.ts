import { sql } from "kysely";
import { openPgliteThread } from "/work/wt/issue-52/src/db/connection/connect.ts";
const h = await openPgliteThread({ dataDir: "/tmp/p52b/data-after" });
const run = (await sql<{ id: string }>`select id from controls_migration.runs order by started_at desc limit 1`.execute(h.db)).rows[0]!.id;
console.log(run);
for (const q of [
  sql`explain analyze select 1 where not exists (select 1 from controls_migration.findings g where g.run_id = ${run} and g.identity_id = 'x' and g.finding not in ('invalid_source_row','source_warning'))`,
  sql`select relname, n_live_tup, last_analyze, last_autoanalyze from pg_stat_user_tables where schemaname='controls_migration' order by n_live_tup desc limit 8`,
  sql`select relname, reltuples, relpages from pg_class where relnamespace = 'controls_migration'::regnamespace and relkind in ('r','i') order by relpages desc limit 12`,
]) console.log((await q.execute(h.db)).rows);
await h.close();
