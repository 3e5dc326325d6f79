/**
 * The layer table: every part of the repository's code, its role, what it may import, and the
 * files through which others must enter it. ARCHITECTURE.md's "Folders" table is rendered from it
 * (`npm run docs:layers`), and `test/unit/repo.import-rules.test.ts` checks every import against it.
 * A file belongs to the part with the longest matching path; an import inside one part is free.
 */

export interface Layer {
  /** The part's name, as `mayImport` names it. */
  readonly name: string;
  /** Folders (ending in "/") and files it is made of. */
  readonly paths: readonly string[];
  readonly role: string;
  /** The parts its files may import. */
  readonly mayImport: readonly string[];
  /** When set, other parts import it only through these files. */
  readonly entries?: readonly string[];
  /** Parts whose files it may import past their entries (tests of their internals). */
  readonly seesInternals?: readonly string[];
}

export const LAYERS: readonly Layer[] = Object.freeze([
  {
    name: "cli",
    paths: ["src/cli.ts", "src/bin.ts"],
    role: "yargs, strict; registers commands. Imports nothing up front: `--version` reads package.json only, `--help` loads yargs and the options table, a command loads only its own module (`commands/index.ts`: each command's name, help line and loader). `bin.ts` is the installed command: it runs the build's one-file bundle of `cli.ts` (`dist/cli.cjs`, `scripts/build-bundle.ts`) through V8's code cache made at build time: one file to read, parsed and compiled once, where the ES modules are several hundred files to resolve at every start",
    mayImport: ["commands", "config", "base"],
  },
  {
    name: "commands",
    paths: ["src/commands/"],
    role: "one module per command (`discard.ts`, `version.ts` included); turns flags into config, opens resources, releases them; `run-command.ts` maps errors to exit codes (and `--json` error objects) and SIGINT to a cancel signal; `pipeline-wiring.ts` wires the pipeline to a platform client and progress (shared by plan/apply/reconcile and `demo`); `confirm-prompt.ts` the terminal confirmation; `usage-error.ts` what yargs refusals print (and retired commands, refused before yargs parses); `exit-codes.ts` the exit codes each command can return, written once for its `--help`, the top-level help and README's table (`exit-codes-readme.ts`, `npm run docs:exit-codes`)",
    mayImport: ["config", "contract", "db", "migration", "platform", "reports", "base"],
  },
  {
    name: "config",
    paths: ["src/config/", "src/config.ts"],
    role: "the only reader of `process.env`. One options table (`options.ts`, `command-options.ts`: flag, env var, default, zod schema factory, group, help); `load.ts` compiles flags > env > defaults into frozen config objects, reporting every problem at once (`load-run-control.ts` for revert, status and set-rate); `url-policy.ts`; yargs options, `--help` and README's table are generated from the table (`yargs-options.ts`, `readme-table.ts`). `src/config.ts` re-exports it `option-kit.ts` is the table kit (row type, schemas, compiler `read-table.ts`, yargs rendering) that the sandbox package builds its own table with; `help-entry.ts` what `--help` needs (the global table and its yargs rendering, no zod).; the settings a run is bound to, each written once, in `run-settings-table.ts`",
    mayImport: ["contract", "base"],
    entries: ["src/config.ts", "src/config/option-kit.ts", "src/config/help-entry.ts"],
  },
  {
    name: "migration",
    paths: ["src/migration/"],
    role: "the product, in sub-folders by job: `read/` the source pass and the platform's state (`source-stage.ts`, `state-stage.ts`, `state-strategy.ts` auto's choice, the partitioned listing and its windows, the snapshot, `source-index.ts` what the source pass kept, by id, in compact typed arrays, at most a bound of ids (`past-ids.ts` the filter of those it refused, `source-view.ts` what a batch reads of the source past the bound), `held-pages.ts` with `packed-ids.ts`, `identity-reads.ts` reads identities by id for what a strategy did not learn, `listed-identity.ts` an identity as a page or a read by id shows it); `classify/` the mapping and the diff rules (`mapping.ts`, `classify.ts`, `restriction.ts`; the platform's legacy fields as a third side in `three-way.ts`, `three-way-rules.ts`) and the findings stream (`findings-stream.ts` stores a listing's pages with their findings, held in memory until the source rows are stored; `listed-once.ts` claims each listed identity once, in memory or, past the source index's bound, in the database; `unlisted-candidates.ts` the candidates no page listed; `findings-memory.ts` how many pages it holds); `execute/` the journal's writes (`executor.ts` runs the journal with p-map behind `write-gate.ts`, `action-outcome.ts` verifies outcomes in doubt, `delete-action.ts` the guarded delete, `reverify.ts` re-reads pending actions and `source-recheck.ts` the source's flags before a send, `platform-wait.ts`, `adoptable.ts`, `create-answer.ts` checks a create's answer, `awaited-create.ts` reads again before a create whose wait for the platform expired, and after its answer, deleting its own control when the platform made one meanwhile); `steer/` steering and watching a running run (`run-control.ts` polls the run's control row, throttle file and daily window and opens or closes the write gate; `local-channel.ts` PGlite's status file and request folder, `local-reads.ts` the writer's answers there to `runs`/`show`/`report` (`read-stage-channel.ts` serves the channel, status file and reads while a run, a revert too, reads or writes its reports), whose output `read-commands.ts` renders for either path; `run-status.ts` what `status` shows, `run-stage.ts` the stage a running run notes for it; progress; `metrics-file.ts`); `run/` a run from start to end (`pipeline.ts` orchestrates plan/apply/reconcile, `run-lifecycle.ts` settles, resumes, claims, heartbeats and closes runs (failed with their error, declined), `writer-handover.ts` hands the last second's sends of one writer process to the next, whose one-second cap counts them (or holds a second after a writer that died), `run-binding.ts` a resume's platform and source, `run-world.ts` the source relation as resolved and the platform's key recorded at a run's start and compared by a resume and `apply --plan` (`plan-adoption.ts`), `run-settings.ts` its settings, `run-discard.ts` gives a run up, `ledger.ts`/`run-ledger.ts` the books that must balance before exit 0, `exit-code.ts` the pure exit-code policy (`--exit-on`), `world-delta.ts` the outside changes since the previous writing run, `run-summary.ts` tallies a run into summary.json, `report.ts` its reports, `revert.ts` the revert run with `revert-claim.ts`, `revert-context.ts`, `revert-diff.ts`, `revert-declined.ts`)",
    mayImport: ["config", "contract", "db", "platform", "reports", "reports-html", "base"],
  },
  {
    name: "db",
    paths: ["src/db/"],
    role: "SQL only, in sub-folders by job; the table types stay at the top (`schema.ts`, where the schema name is written once as `TOOL_SCHEMA`/`TOOL_TABLES`, with its parts `observation-tables.ts` and `column-types.ts`), imported from every sub-folder and from migration and commands: `connection/` opening the database and what every open checks (pg Pool + pg-cursor, or PGlite in a worker thread: `pglite-thread.ts` on the main side (which refuses a statement of more parameters than PGlite answers), `pglite-worker.ts` in the thread, `pglite-thread-dialect.ts` its Kysely dialect with cursor streaming, a fresh data folder unpacked from the pre-initialised one the build makes, its schema included, `pglite-template.ts`; `pg-module.ts` loads pg without its Cloudflare probe; reconnection, `reconnect.ts`, `reconnecting-kysely.ts`, `pg-errors.ts`; which instances are PGlite's, `embedded.ts`; the migrations runner; writer lock, data-folder lock, abandoned runs; `status`'s one-statement read on PostgreSQL, `status-query.ts`); `source/` the user's source relation (reader, its page queries in `source-pages.ts`, text flags read as PostgreSQL reads them in `flag-text.ts`, the catalog check, anomalies, the seeder, a run's source queries: invalid rows, the re-read before a send, the id set a writer keeps in `source-id-set-queries.ts`); `journal/` what a run records as it goes (run, snapshot, finding, journal, plan, reverify, revert, run-control, outcome and three-way queries, the last writer's sign of life and closing sends in `writer-handover.ts`, `store-classified.ts`, the listed identities claimed past the source index's bound in `claim-queries.ts`, the ledger's counts in `ledger-queries.ts`, bulk inserts by column arrays in `unnest-insert.ts`, the executor's journal writes that arrive together sent as one statement in `journal-writes.ts`, on the group commit it shares with the classified batches, `group-commit.ts` at the top; lookups of a batch of ids by key run with sequential scans off, `key-lookups.ts`); `report-queries/` what reports and read commands read back (diff rows, their select, PGlite's JSON array and its decoder made from one column list, `DIFF_RECORD_COLUMNS`; a revert's too, `show`'s history, metrics, the request series, the world's delta in `world-delta-queries.ts`, `world-finding-queries.ts`, its source side in `source-flag-delta-queries.ts`, each of its statements run with nested loops off, `hash-joins.ts`; whether the earlier complete run recorded an identity as listed bare, in `listed-bare-sql.ts`: the delta concludes nothing of an identity that run neither kept nor recorded, since its pages left it out)",
    mayImport: ["config", "contract", "migrations", "base"],
  },
  {
    name: "platform",
    paths: ["src/platform/"],
    role: "HTTP only: the client (`platform-client.ts`, its interface in `platform-client-types.ts`), token manager, per-path rate budget + p-limit, retries with full jitter, problem+json → `PlatformError` (retryable / fatal / ambiguous), tolerant wire parsers, listing guards (`runaway-guard.ts`), `--max-wait-s` refusals, the run's patience with an endpoint that keeps refusing (`refusal-patience.ts`, `--max-refused-s`), capped response bodies (`bounded-body.ts`), one redirect policy for the API and token requests (`redirect-policy.ts`, `token-request.ts`), metrics, redaction",
    mayImport: ["config", "contract", "base"],
    entries: ["src/platform/index.ts"],
  },
  {
    name: "reports",
    paths: ["src/reports/"],
    role: "formatting only: formula-safe, escape-safe streaming CSV (csv-stringify), summaries (one key order: `canonical-summary.ts`; the three-way table: `three-way-section.ts`), the `runs` listing, report files written by temporary file and rename (`report-files.ts`), one writer per report folder (`out-folder-lock.ts`, the data-folder lock's scheme), `show`'s text and JSON (`identity-history.ts`), the Prometheus metrics file (`run-metrics.ts`, prom-client), the JSON log line of a run's end (`summary-log.ts`)",
    mayImport: ["db", "base"],
  },
  {
    name: "reports-html",
    paths: ["src/reports/html/"],
    role: "report.html: the `html` tag and JSON-for-script escaping (`html-text.ts`), inline SVG bar, before → after and timeline charts (steering events marked), outcome colours by meaning (`outcome-tone.ts`), the page's CSS and script as strings, the page around the rows (`report-page.ts`) and the writer streaming the first 10,000 diff rows (`write-report-html.ts`)",
    mayImport: ["reports", "base"],
  },
  {
    name: "contract",
    paths: ["src/contract/"],
    role: "the platform's facts, once: every path (`paths.ts`), rate limits per endpoint, the token rate, the penalty, the page size and the id limit (`limits.ts`), control types, reason codes (the 11 published, plus the preview's spelling accepted), set_by spellings, scopes, the reader of the published schema copy in `schema/`, and the synthetic identities both sides seed from (`synthetic.ts`). Ships with the CLI; guarded by `test/unit/contract.published-schema.test.ts`",
    mayImport: [],
    entries: ["src/contract/index.ts"],
  },
  {
    name: "base",
    paths: [
      "src/errors.ts",
      "src/log.ts",
      "src/secret.ts",
      "src/backoff.ts",
      "src/visible-text.ts",
      "src/daily-window.ts",
      "src/version.ts",
      "src/log-levels.ts",
      "src/plural.ts",
      "src/thousands.ts",
      "src/disk-full.ts",
      "src/v8-flags.ts",
    ],
    role: "leaf helpers: errors and exit codes, the logger (its levels apart, `log-levels.ts`, so the options table does not load pino), secrets, the one backoff-with-jitter and overflow-safe sleep, the one escaping of control and bidi characters, daily windows, the version, plurals (`plural.ts`), counts with their thousands grouped without loading ICU (`thousands.ts`), full disks named with the file or folder and its flag (`disk-full.ts`: ENOSPC, or the embedded database failing with its folder's disk short of space), the V8 flags a process changes after start-up and their defaults (`v8-flags.ts`, so the installed command's code cache is made with a fresh start's flags)",
    mayImport: [],
  },
  {
    name: "migrations",
    paths: ["migrations/"],
    role: "the tool's schema, forward-only, static provider for Kysely's Migrator",
    mayImport: [],
  },
  {
    name: "scripts",
    paths: ["scripts/"],
    role: "repository scripts, not the product: `demo.ts` (`npm run demo`, through `run-demo.mjs`, which runs the build's bundle of it, `dist/demo.mjs`, when current) and `sandbox-from-db.ts` (`npm run sandbox:from-db`) run the CLI's code with the sandbox from the workspace; `build-bundle.ts` (the CLI's bundle and code cache, the demo's bundle) and `build-pglite-template.ts` (the template, schema included, kept by PGlite version and migrations in `node_modules/.cache/controls-migrate-build/` for the next build), run by `npm run build`; `run-suite.mjs` (`npm test`'s runner: node:test over the TypeScript test files themselves, node's compile cache in `node_modules/.cache/`, a temporary folder of the run's own, on a tmpfs when there is one, and the check that the tests left no file or folder there or in the working tree); README generators",
    mayImport: [
      "cli",
      "commands",
      "config",
      "contract",
      "db",
      "migration",
      "platform",
      "reports",
      "base",
      "sandbox",
      "tests",
    ],
    seesInternals: ["config"],
  },
  {
    name: "sandbox",
    paths: ["packages/sandbox/src/index.ts"],
    role: "the sandbox package's entry (`controls-sandbox`): what the CLI's tests, the demo and the benchmarks use",
    mayImport: ["sandbox-core", "sandbox-cli", "sandbox-layers", "sandbox-domains"],
    entries: ["packages/sandbox/src/index.ts"],
  },
  {
    name: "sandbox-door",
    paths: ["packages/sandbox/src/shared.ts"],
    role: "the sandbox's one door into the CLI package: re-exports `src/contract/index.ts` and `src/config/option-kit.ts`, nothing else",
    mayImport: ["contract", "config"],
    entries: ["packages/sandbox/src/shared.ts"],
  },
  {
    name: "sandbox-cli",
    paths: ["packages/sandbox/src/cli/"],
    role: "`controls-sandbox`'s command line: its option table (`options.ts`, on the CLI's row type; defaults from the sandbox's, which come from the contract), `--endpoint-rate-limit` parsing, `serve.ts` (ready line, export lines, stop on a signal), `main.ts` (yargs)",
    mayImport: ["sandbox-core", "sandbox-layers", "sandbox-domains", "sandbox-door"],
  },
  {
    name: "sandbox-core",
    paths: ["packages/sandbox/src/"],
    role: "`index.ts` public exports, `start-sandbox.ts` options → context → seed → listen → handle, `app.ts` the Fastify app and its plugins, `context.ts` the one state every route and the handle reach, `options.ts` defaults and checks, `paths.ts` the contract's paths as route templates, `types.ts` the public handle and stats",
    mayImport: ["sandbox-layers", "sandbox-domains", "sandbox-door"],
  },
  {
    name: "sandbox-layers",
    paths: [
      "packages/sandbox/src/gateway/",
      "packages/sandbox/src/paging/",
      "packages/sandbox/src/input/",
      "packages/sandbox/src/oauth/",
    ],
    role: 'what every domain uses and none of them owns: `gateway/` (what every request passes, in order: admin Host/Origin check, rate limiter and endpoint limits, faults, auth (request guard), stats, problem+json, the 405 table, the committed-then-dropped write answer); `oauth/` the token issuer and route; `paging/` (the cursor codec, the one keyset index behind every listing, the listing query (filters, bounds, and the walk: order, page_cursor bound to the filters, next_page_cursor)); `input/` (query params, body fields (the one "is a JSON object" check; `FieldReader` checks a body once and reads it field by field), fixed-point decimals, seed inputs, request validation generated from the published schema)',
    mayImport: ["sandbox-core", "sandbox-door"],
  },
  {
    name: "sandbox-domains",
    paths: [
      "packages/sandbox/src/identity/",
      "packages/sandbox/src/exchange/",
      "packages/sandbox/src/transfer/",
      "packages/sandbox/src/deposit-address/",
      "packages/sandbox/src/orchestration/",
      "packages/sandbox/src/admin/",
    ],
    role: "one folder per domain, each with routes, store, seed, types, seeding API, admin routes and plugin: `identity/` (identities and controls, drift, set_by spelling), `exchange/` (quote executions, orders), `transfer/` (internal transfers, balances), `deposit-address/`, `orchestration/` (rules), `admin/` (faults, limits, reset, revoke, stats, request windows). A domain never imports another",
    mayImport: ["sandbox-core", "sandbox-layers", "sandbox-door"],
  },
  {
    name: "tests",
    paths: ["test/"],
    role: "the CLI's tests: `unit/` (pure logic), `integration/` (PGlite + PostgreSQL, sandbox over HTTP), `e2e/` (CLI child processes ↔ sandbox, bad-input corpus), `helpers/` (each PGlite test database a copy of one of two folders initialised once for the suite in `node_modules/.cache/`, empty or migrated, `pglite-folder.ts`, or of one prepared once for a test's source, `seededTarget` (`cli-rig.ts`) and `sourceTarget` (`read-world.ts`), each built by one process however many ask, `build-once.ts`; a test's temporary folders from `temp-dir.ts`, removed when its process exits; the one `waitFor`, `wait-for.ts`, whose timeout is a failure bound and never a claim about speed; the one set of platform assertions, `platform-assertions.ts`: `clientSellOnly`, `assertExactlyOnce`, `assertNoneRestricted`), `bench/` (`npm run bench`), `chaos/` (`npm run chaos`), and this table (`layers.ts`). The sandbox only through its package name (`controls-sandbox`, `controls-sandbox/test-helpers`)",
    mayImport: [
      "cli",
      "commands",
      "config",
      "contract",
      "db",
      "migration",
      "platform",
      "reports",
      "reports-html",
      "base",
      "migrations",
      "sandbox",
      "sandbox-tests",
    ],
    seesInternals: ["config", "contract", "platform"],
  },
  {
    name: "sandbox-tests",
    paths: ["packages/sandbox/test/"],
    role: "the sandbox's own tests and helpers; `helpers/index.ts` (HTTP calls, the bin as a child process) is exported as `controls-sandbox/test-helpers`",
    mayImport: [
      "sandbox",
      "sandbox-core",
      "sandbox-cli",
      "sandbox-layers",
      "sandbox-domains",
      "sandbox-door",
    ],
    entries: ["packages/sandbox/test/helpers/index.ts"],
  },
]);

/** Extra rules of the sandbox's domains, not expressible as layers: a domain never imports another. */
export const SANDBOX_DOMAIN_FOLDERS: readonly string[] = Object.freeze(
  LAYERS.find((l) => l.name === "sandbox-domains")?.paths ?? [],
);

const cell = (s: string) => s.replaceAll("|", "\\|");
const code = (paths: readonly string[]) => paths.map((p) => `\`${p}\``).join(", ");

/** ARCHITECTURE.md's "Folders" table, rendered from {@link LAYERS}. */
export function renderLayersTable(layers: readonly Layer[] = LAYERS): string {
  const byName = new Map(layers.map((l) => [l.name, l]));
  const lines = ["| part | paths | role | may import | entered through |", "|---|---|---|---|---|"];
  for (const l of layers) {
    const may = l.mayImport.map((n) => (byName.has(n) ? n : `${n} (unknown)`)).join(", ");
    const internals = l.seesInternals?.length
      ? `; past the entries of ${l.seesInternals.join(", ")}`
      : "";
    lines.push(
      `| ${l.name} | ${code(l.paths)} | ${cell(l.role)} | ${may || "—"}${internals} | ${l.entries ? code(l.entries) : "any file"} |`,
    );
  }
  return lines.join("\n");
}

/** The markers between which ARCHITECTURE.md holds the rendered table. */
export const TABLE_START =
  "<!-- layers:start (generated from test/layers.ts: npm run docs:layers) -->";
export const TABLE_END = "<!-- layers:end -->";
