/**
 * Issue 12 §2 end to end: `--state filtered` (the SELL_ONLY listing) against `--state bulk` on the
 * crafted dataset, through the CLI against the sandbox over real HTTP, on every database backend,
 * with the sandbox answering set_by in both spellings. Each strategy gets its own sandbox and
 * database, crafted alike, and the same commands in the same order. Filtered reads each candidate
 * its listing did not show by id (issue 27), so its findings are bulk's.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { UNLISTED_DETAIL } from "../../src/migration/classify/findings.ts";
import { AWAITING_SERVICE_DETAIL } from "../../src/migration/classify/three-way.ts";
import { normalizeSetBy } from "../../src/platform/index.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { type CliResult, runCli } from "../helpers/cli.ts";
import { parseCsv } from "../helpers/corpus.ts";
import {
  craftPlatform,
  EXPECTED_FINDINGS,
  ids,
  SOURCE,
  seedCraftedSource,
} from "../helpers/crafted-dataset.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { startProxy, type TestProxy } from "../helpers/http-proxy.ts";

const keyOf = new Map(Object.entries(ids).map(([k, v]) => [v, k]));

interface Chain {
  readonly name: string;
  readonly state: "bulk" | "filtered";
  sandbox: Sandbox;
  proxy: TestProxy;
  target: TestTarget;
  env: Record<string, string>;
  out: string;
}

async function chain(
  name: string,
  state: Chain["state"],
  spelling: "published" | "short",
  backend: (typeof backends)[number],
): Promise<Chain> {
  const sandbox = await startSandbox({
    port: 0,
    rateLimitRps: 0,
    tokenRateLimitRps: 0,
    setBySpelling: spelling,
  });
  craftPlatform(sandbox);
  const proxy = await startProxy(sandbox.apiUrl);
  const target = await backend.target();
  const h = await target.open({ migrate: false });
  await seedCraftedSource(h.db);
  await h.close();
  return {
    name,
    state,
    sandbox,
    proxy,
    target,
    out: mkdtempSync(join(tmpdir(), `cm-filtered-${name}-`)),
    env: {
      API_BASE_URL: proxy.url,
      OAUTH_TOKEN_URL: sandbox.tokenUrl,
      OAUTH_CLIENT_ID: sandbox.credentials.clientId,
      OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
    },
  };
}

interface Step {
  readonly result: CliResult;
  readonly summary: RunSummary;
  /** diff.csv as "key|finding|expected_set_by|observed_set_by|observed_is_overridable|action|outcome". */
  readonly rows: string[];
  /** The finding details (outcome cells without an action), keyed as rows are. */
  readonly details: string[];
}

async function step(c: Chain, label: string, args: string[]): Promise<Step> {
  const dir = join(c.out, label);
  const result = await runCli(
    [
      ...args,
      "--state",
      c.state,
      "--all",
      "--json",
      "--out",
      dir,
      ...c.target.args,
      "--no-progress",
    ],
    c.env,
  );
  assert.ok(result.stdout.trim(), `${c.name} ${label} printed no summary: ${result.stderr}`);
  const records = parseCsv(readFileSync(join(dir, "diff.csv"), "utf8"));
  const key = (r: Record<string, string>) =>
    [
      keyOf.get(r.identity_id ?? "") ?? r.identity_id,
      r.finding,
      r.expected_set_by,
      r.observed_set_by ? normalizeSetBy(r.observed_set_by) : "",
      r.observed_is_overridable,
      r.action,
    ].join("|");
  return {
    result,
    summary: JSON.parse(result.stdout),
    rows: records.map((r) => `${key(r)}|${r.outcome ?? ""}`).sort(),
    details: records
      .filter((r) => !r.action)
      .map((r) => `${key(r)}|${r.outcome}`)
      .sort(),
  };
}

/** Every identity's active controls, owner normalised: what "the same end state" compares. */
function endState(sandbox: Sandbox): Record<string, string[]> {
  // I is unknown to the platform and K (a NULL flag) was never put on it.
  const keys = [...SOURCE.map(([k]) => k).filter((k) => k !== "I" && k !== "K"), "J"];
  return Object.fromEntries(
    keys.map((k) => [
      k,
      sandbox
        .controlsOf(ids[k]!)
        .map((c) => `${c.type}:${normalizeSetBy(c.set_by)}:${c.is_overridable}`)
        .sort(),
    ]),
  );
}

/**
 * Rows without the unknown identity's: its finding is bulk's, its detail says how it was learnt
 * (absent from a complete listing, or a 404 to its read).
 */
const withoutUnknown = (rows: string[]) => rows.filter((r) => !r.startsWith("I|"));
/** The candidates the SELL_ONLY listing does not show: they hold no active SELL_ONLY. */
const UNLISTED_KEYS = ["A", "C", "I", "M", "N"];
const IDENTITY_READ = /^\/v2\/identity\/identities\/([^/?]+)$/;

for (const backend of backends) {
  describe(`--state filtered against --state bulk through the CLI on ${backend.name}`, () => {
    let chains: Chain[];
    const filteredNames = () => chains.filter((c) => c.state === "filtered").map((c) => c.name);
    const runAll = async (label: string, args: string[]) => {
      const steps = await Promise.all(chains.map((c) => step(c, label, args)));
      return Object.fromEntries(chains.map((c, i) => [c.name, steps[i]!])) as Record<string, Step>;
    };

    before(async () => {
      chains = await Promise.all([
        chain("bulk", "bulk", "published", backend),
        chain("filtered", "filtered", "published", backend),
        // The spelling is the client's concern, not the database's: once is enough.
        ...(backend === backends[0] ? [chain("filtered-short", "filtered", "short", backend)] : []),
      ]);
    });

    after(async () => {
      for (const c of chains ?? []) {
        await c.proxy.close();
        await c.sandbox.close();
        await c.target.drop();
        rmSync(c.out, { recursive: true, force: true });
      }
    });

    it("plan gives bulk's findings: filtered reads each candidate its listing did not show by id, learning its legacy fields and that the unknown identity does not exist", async () => {
      const s = await runAll("plan", ["plan"]);
      const bulk = s.bulk!;
      assert.equal(bulk.result.code, 2, bulk.result.stderr);
      assert.deepEqual(bulk.summary.findings, EXPECTED_FINDINGS);
      for (const name of filteredNames()) {
        const f = s[name]!;
        assert.equal(f.result.code, 2, f.result.stderr);
        assert.deepEqual(f.summary.findings, EXPECTED_FINDINGS, name);
        assert.deepEqual(withoutUnknown(f.rows), withoutUnknown(bulk.rows), name);
        const unknown = f.rows.filter((r) => r.startsWith("I|"));
        assert.equal(unknown.length, 1, unknown.join("\n"));
        assert.match(unknown[0]!, /^I\|identity_not_found\|CLIENT\|\|\|\|/);
        // C holds no control, so the listing does not show it; its read brings the platform's
        // admin_disabled, true: the platform's migration will create the SERVICE control.
        assert.ok(
          f.details.includes(`C|awaiting_platform_migration|SERVICE||||${AWAITING_SERVICE_DETAIL}`),
          f.details.join("\n"),
        );
        assert.ok(
          !f.rows.some((r) => r.includes(UNLISTED_DETAIL)),
          "no finding rests on the listing's absence",
        );
        assert.equal(f.summary.strategy, "filtered");
        assert.match(f.summary.platform_state?.existence ?? "", /^read per unlisted candidate/);
        const md = readFileSync(
          join(chains.find((c) => c.name === name)!.out, "plan", "summary.md"),
          "utf8",
        );
        assert.match(md, /existence: read per unlisted candidate/);
      }
      assert.match(bulk.summary.platform_state?.existence ?? "", /^read by id when unlisted/);
    });

    it("filtered's plan read by id exactly the candidates its listing did not show, each once", () => {
      for (const c of chains.filter((x) => x.state === "filtered")) {
        const reads = c.proxy.requests
          .filter((r) => r.method === "GET")
          .map((r) => IDENTITY_READ.exec(r.url)?.[1])
          .filter((id): id is string => id !== undefined)
          .map((id) => keyOf.get(decodeURIComponent(id)) ?? id);
        assert.deepEqual(reads.sort(), UNLISTED_KEYS, c.name);
        const summary = JSON.parse(
          readFileSync(join(c.out, "plan", "summary.json"), "utf8"),
        ) as RunSummary;
        assert.equal(
          summary.requests["GET /v2/identity/identities/{id}"]?.count,
          UNLISTED_KEYS.length,
          c.name,
        );
        assert.equal(summary.requests["GET /v2/identity/controls"], undefined, c.name);
      }
    });

    it("the filtered listing asks only for identities holding a SELL_ONLY, and no request carries set_by", () => {
      for (const c of chains.filter((x) => x.state === "filtered")) {
        const listings = c.proxy.requests.filter((r) =>
          r.url.startsWith("/v2/identity/identities?"),
        );
        assert.ok(listings.length >= 1);
        for (const r of listings) {
          assert.equal(
            new URL(r.url, "http://x").searchParams.getAll("control_types").join(),
            "SELL_ONLY",
            r.url,
          );
        }
        for (const r of c.proxy.requests) {
          assert.ok(
            !/set_by/i.test(r.url) && !/set_by/i.test(r.body),
            `${r.method} ${r.url} ${r.body}`,
          );
        }
      }
    });

    it("apply creates the same controls, and filtered sends no create for the unknown identity its read proved absent", async () => {
      const s = await runAll("apply", ["apply", "--yes"]);
      assert.equal(s.bulk!.result.code, 0, s.bulk!.result.stderr);
      assert.deepEqual(s.bulk!.summary.outcomes, { "succeeded:created": 4 });
      for (const name of filteredNames()) {
        const f = s[name]!;
        assert.equal(f.result.code, 0, f.result.stderr);
        assert.deepEqual(f.summary.outcomes, { "succeeded:created": 4 }, name);
        assert.deepEqual(
          f.rows.filter((r) => r.startsWith("I|")).map((r) => r.split("|").slice(0, 6).join("|")),
          ["I|identity_not_found|CLIENT|||"],
        );
      }
      for (const c of chains.filter((x) => x.state === "filtered")) {
        const creates = c.proxy.requests.filter(
          (r) => r.method === "POST" && r.url.startsWith("/v2/identity/controls"),
        );
        assert.equal(creates.length, 4, c.name);
        assert.ok(!creates.some((r) => r.body.includes(ids.I!)), `${c.name}: no create for I`);
      }
      const want = endState(chains[0]!.sandbox);
      for (const c of chains.slice(1)) assert.deepEqual(endState(c.sandbox), want, c.name);
    });

    it("reconcile and reconcile --prune give bulk's findings and leave the same end state", async () => {
      const rec = await runAll("reconcile", ["reconcile", "--yes", "--exit-on", "any"]);
      const pruned = await runAll("prune", ["reconcile", "--yes", "--prune", "--exit-on", "any"]);
      for (const s of [rec, pruned]) {
        assert.equal(s.bulk!.result.code, 2, s.bulk!.result.stderr);
        for (const name of filteredNames()) {
          const f = s[name]!;
          assert.equal(f.result.code, 2, f.result.stderr);
          assert.deepEqual(f.summary.findings, s.bulk!.summary.findings, name);
          assert.deepEqual(withoutUnknown(f.rows), withoutUnknown(s.bulk!.rows), name);
          assert.equal(f.summary.findings.unknown_to_source, 1, "J, unknown to the source");
        }
      }
      assert.equal(pruned.bulk!.summary.outcomes["succeeded:deleted"], 3);
      const want = endState(chains[0]!.sandbox);
      assert.deepEqual(want.E, [], "the stale control of an identity with no flag is pruned");
      for (const c of chains.slice(1)) {
        assert.deepEqual(endState(c.sandbox), want, c.name);
        assert.equal(c.sandbox.stats().writes.deletes, 3, c.name);
      }
    });
  });
}
