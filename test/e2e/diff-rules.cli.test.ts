/**
 * The diff rules of issue 10 end to end: the CLI against the sandbox over real HTTP, on every
 * database backend. A control of the other owner never stands in for ours, and --prune never leaves
 * a flagged identity without a SELL_ONLY, neither from the plan's view nor at the re-read right
 * before a delete.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { ControlRecord, Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { CONTROLS, call, tokenFor } from "controls-sandbox/test-helpers";
import { sql } from "kysely";
import { prng, uuidFrom } from "../../src/contract/index.ts";
import { type CliResult, runCli } from "../helpers/cli.ts";
import { CLI_ENTRY } from "../helpers/cli-entry.ts";
import { parseCsv } from "../helpers/corpus.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { sourceTarget } from "../helpers/read-world.ts";
import { scratchCwd } from "../helpers/scratch-cwd.ts";

const rand = prng(1010);
const uuid = () => uuidFrom(rand);
/** A: user_disabled, platform holds only the SERVICE control. */
const A = uuid();
/** B: admin_disabled, platform holds only a CLIENT control. */
const B = uuid();
/** Z: no flag, platform holds a stale overridable CLIENT control. */
const Z = uuid();
/** G: admin_disabled, platform holds an overridable SERVICE control and a CLIENT one. */
const G = uuid();
/** Y: no flag, a stale CLIENT control (pruned in the same run as G's guard). */
const Y = uuid();
/** H: admin_disabled, an overridable SERVICE control and two CLIENT ones. */
const H = uuid();

type Seed = { id: string; ud: boolean; ad: boolean; controls: [string, boolean][] };

/** Platform writes of the controls endpoint (POST creates, DELETE deletes) counted by the sandbox. */
function writeRequests(sandbox: Sandbox): { post: number; del: number } {
  const sum = (key: string) =>
    Object.values(sandbox.stats().requests[key] ?? {}).reduce((a, b) => a + b, 0);
  return { post: sum(`POST ${CONTROLS}`), del: sum(`DELETE ${CONTROLS}`) };
}

const isClient = (c: ControlRecord) => /^(SET_BY_)?CLIENT$/.test(c.set_by);
const sellOnly = (sandbox: Sandbox, id: string) =>
  sandbox.controlsOf(id).filter((c) => c.type === "SELL_ONLY");

/** A sandbox with the seeds' identities and controls, and a database with their source rows. */
async function setUp(seeds: Seed[], backend: (typeof backends)[number]) {
  const sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
  sandbox.seedIdentities(
    seeds.map((s) => ({ id: s.id, user_disabled: s.ud, admin_disabled: s.ad })),
    { migratedFraction: 0, driftFraction: 0 },
  );
  for (const s of seeds) {
    for (const [set_by, is_overridable] of s.controls) {
      sandbox.addControl(s.id, { type: "SELL_ONLY", set_by, is_overridable });
    }
  }
  const target = await sourceTarget(
    backend,
    seeds.map((s) => [s.id, s.ud, s.ad] as const),
  );
  const env = {
    API_BASE_URL: sandbox.apiUrl,
    OAUTH_TOKEN_URL: sandbox.tokenUrl,
    OAUTH_CLIENT_ID: sandbox.credentials.clientId,
    OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
  };
  return { sandbox, target, env };
}

/** diff.csv rows of one identity as "finding|action|outcome", sorted. */
function csvOf(dir: string, id: string): string[] {
  return parseCsv(readFileSync(join(dir, "diff.csv"), "utf8"))
    .filter((r) => r.identity_id === id)
    .map((r) => `${r.finding}|${r.action}|${r.outcome}`)
    .sort();
}

for (const backend of backends) {
  describe(`diff rules through the CLI on ${backend.name}: identities A, B and a stale no-flag one`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    let seeded: Map<string, ControlRecord[]>;
    const out = mkdtempSync(join(tmpdir(), "cm-diff-rules-"));
    const ids = [A, B, Z];
    // Bulk listing: only it sees a stale control on an identity with no flag (per-identity reads
    // only the source's flagged rows).
    const cli = (args: string[]) =>
      runCli([...args, ...target.args, "--state", "bulk", "--no-progress"], env);
    const all = () =>
      new Map(ids.map((id) => [id, sandbox.controlsOf(id, { includeDeleted: true })]));

    before(async () => {
      ({ sandbox, target, env } = await setUp(
        [
          { id: A, ud: true, ad: false, controls: [["SERVICE", false]] },
          { id: B, ud: false, ad: true, controls: [["CLIENT", true]] },
          { id: Z, ud: false, ad: false, controls: [["CLIENT", true]] },
        ],
        backend,
      ));
      seeded = all();
    });

    after(async () => {
      await sandbox?.close();
      await target?.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it("plan pairs no control with one of the other owner: A misses its CLIENT control, B awaits its SERVICE control from the platform", async () => {
      const dir = join(out, "plan");
      const r = await cli(["plan", "--json", "--out", dir]);
      assert.equal(r.code, 2, r.stderr);
      assert.deepEqual(csvOf(dir, A), [
        "missing_client_control|create|user_disabled is true",
        `unexpected_service_control||admin_disabled is false but the platform holds SELL_ONLY set_by SERVICE is_overridable false`,
      ]);
      assert.deepEqual(csvOf(dir, B), [
        // The sandbox's legacy admin_disabled equals the source's: the platform will migrate it.
        "awaiting_platform_migration||admin_disabled is true here and on the platform: its own migration will create the SERVICE SELL_ONLY",
        "unexpected_client_control||kept: identity must stay restricted",
      ]);
      assert.deepEqual(csvOf(dir, Z), [
        "unexpected_client_control|delete_with_prune|user_disabled is false but the platform holds SELL_ONLY set_by CLIENT is_overridable true",
      ]);
      assert.equal(JSON.parse(r.stdout).findings.attribute_mismatch, 0);
      assert.deepEqual(writeRequests(sandbox), { post: 0, del: 0 });
    });

    it("apply creates A's CLIENT control and touches nothing else", async () => {
      const r = await cli(["apply", "--yes", "--json", "--out", join(out, "apply")]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).outcomes["succeeded:created"], 1);
      assert.deepEqual(writeRequests(sandbox), { post: 1, del: 0 });
      const now = all();
      for (const id of [B, Z]) assert.deepEqual(now.get(id), seeded.get(id));
      const a = now.get(A)!;
      assert.deepEqual(a.slice(0, 1), seeded.get(A), "A's SERVICE control is untouched");
      assert.equal(a.length, 2);
      assert.equal(a[1]?.type, "SELL_ONLY");
      assert.ok(isClient(a[1]!), `created set_by ${a[1]?.set_by}`);
      assert.equal(a[1]?.is_overridable, true);
      assert.equal(a[1]?.deleted_at, undefined);
    });

    it("reconcile --prune --yes keeps B's only SELL_ONLY and deletes the no-flag identity's stale one", async () => {
      const dir = join(out, "prune");
      const r = await cli([
        "reconcile",
        "--prune",
        "--yes",
        "--exit-on",
        "any",
        "--json",
        "--out",
        dir,
      ]);
      // Report-only findings remain (A's service control, B's missing one and its kept client one).
      assert.equal(r.code, 2, r.stderr);
      const summary = JSON.parse(r.stdout);
      assert.equal(summary.outcomes["succeeded:deleted"], 1);
      assert.equal(summary.findings.missing_client_control, 0);
      assert.deepEqual(writeRequests(sandbox), { post: 1, del: 1 });
      assert.deepEqual(sellOnly(sandbox, B), seeded.get(B), "B keeps its only SELL_ONLY");
      assert.deepEqual(sellOnly(sandbox, Z), [], "Z's stale client control is gone");
      assert.equal(sellOnly(sandbox, A).length, 2, "A holds both controls");
      assert.deepEqual(csvOf(dir, B), [
        // The sandbox's legacy admin_disabled equals the source's: the platform will migrate it.
        "awaiting_platform_migration||admin_disabled is true here and on the platform: its own migration will create the SERVICE SELL_ONLY",
        "unexpected_client_control||kept: identity must stay restricted",
      ]);
      assert.deepEqual(csvOf(dir, Z), ["unexpected_client_control|delete|deleted"]);
    });

    it("a second reconcile --prune makes zero writes", async () => {
      const before = writeRequests(sandbox);
      const r = await cli([
        "reconcile",
        "--prune",
        "--yes",
        "--exit-on",
        "any",
        "--json",
        "--out",
        join(out, "again"),
      ]);
      assert.equal(r.code, 2, r.stderr);
      const summary = JSON.parse(r.stdout);
      assert.deepEqual(summary.outcomes, {});
      assert.deepEqual(writeRequests(sandbox), before, "no POST and no DELETE");
      assert.equal(summary.findings.unexpected_client_control, 1, "B's kept control");
      assert.equal(summary.findings.in_sync, 1, "A's client control");
    });
  });

  describe(`the delete guard on ${backend.name}: the re-read right before the delete decides`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    const out = mkdtempSync(join(tmpdir(), "cm-delete-guard-"));

    before(async () => {
      ({ sandbox, target, env } = await setUp(
        [
          {
            id: G,
            ud: false,
            ad: true,
            controls: [
              ["SERVICE", true],
              ["CLIENT", true],
            ],
          },
          { id: Y, ud: false, ad: false, controls: [["CLIENT", true]] },
          {
            id: H,
            ud: false,
            ad: true,
            controls: [
              ["SERVICE", true],
              ["CLIENT", true],
              ["CLIENT", true],
            ],
          },
        ],
        backend,
      ));
    });

    after(async () => {
      await sandbox?.close();
      await target?.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it("a journaled delete is skipped as kept, never sent, when the re-read shows the identity would lose its last SELL_ONLY", async () => {
      const service = (id: string) => sellOnly(sandbox, id).find((c) => !isClient(c))!;
      const clientIds = (id: string) =>
        sellOnly(sandbox, id)
          .filter(isClient)
          .map((c) => c.id);
      const [gClients, hClients] = [clientIds(G), clientIds(H)];
      // The prompt falls between the journal and the deletes. While it waits, the platform lifts
      // its (overridable) SERVICE controls of G and H: their client controls are now all they hold.
      const lifted = [service(G).id, service(H).id];
      const r = await onTerminal(
        [
          "reconcile",
          "--prune",
          "--exit-on",
          "any",
          "--state",
          "bulk",
          "--no-progress",
          "--out",
          join(out, "guard"),
          ...target.args,
        ],
        env,
        async () => {
          const token = await tokenFor(sandbox);
          for (const control_id of lifted) {
            const res = await call(sandbox, token, "DELETE", CONTROLS, {
              query: { control_id, reason: "the platform lifts its control" },
            });
            assert.equal(res.status, 200, res.text);
          }
        },
      );
      assert.equal(r.code, 2, r.stdout);
      assert.match(
        r.stdout,
        /delete 4 unexpected client SELL_ONLY controls/,
        "G's, H's two and Y's",
      );
      assert.deepEqual(clientIds(G), gClients, "G keeps its client control");
      assert.equal(clientIds(H).length, 1, "H loses one client control, never both");
      assert.ok(hClients.includes(clientIds(H)[0]!));
      assert.deepEqual(sellOnly(sandbox, Y), [], "the stale control of Y is still pruned");
      assert.equal(sandbox.stats().writes.deletes, lifted.length + 2, "the lifts, H's and Y's");

      const h = await target.open();
      try {
        const rows = await sql<{
          identity_id: string;
          status: string;
          outcome: string;
          error: string | null;
          attempts: number;
        }>`select identity_id, status, outcome, error, attempts from controls_migration.actions
           where action = 'delete' order by id`.execute(h.db);
        const of = (id: string) =>
          rows.rows
            .filter((x) => x.identity_id === id)
            .map((x) => `${x.status}:${x.outcome}:${x.attempts}`)
            .sort();
        const kept = "skipped:kept: identity must stay restricted:0";
        assert.deepEqual(of(G), [kept]);
        assert.deepEqual(of(H), [kept, "succeeded:deleted:1"]);
        assert.deepEqual(of(Y), ["succeeded:deleted:1"]);
        assert.equal(
          rows.rows.find((x) => x.identity_id === G)?.error,
          "admin_disabled is true and no other active SELL_ONLY would stay after the delete",
        );
      } finally {
        await h.close();
      }
    });
  });
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Runs the CLI on a pseudo-terminal (`script`), waits for its confirmation prompt, runs `meanwhile`
 * and answers "yes". Returns the exit code and everything the terminal showed.
 */
async function onTerminal(
  args: string[],
  env: Record<string, string>,
  meanwhile: () => Promise<void>,
): Promise<CliResult> {
  const command = [process.execPath, ...CLI_ENTRY, ...args].map(shellQuote).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    cwd: scratchCwd(),
    env: { ...process.env, CONTROLS_LOG_LEVEL: undefined, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let shown = "";
  let stderr = "";
  let answered = false;
  const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout: shown, stderr }));
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const prompted = new Promise<void>((resolve) => {
    child.stdout.on("data", (d) => {
      shown += d;
      if (!answered && /"yes"/.test(shown)) {
        answered = true;
        resolve();
      }
    });
  });
  const outcome = await Promise.race([prompted.then(() => "prompt" as const), done]);
  try {
    assert.equal(outcome, "prompt", `no confirmation prompt; the terminal showed:\n${shown}`);
    await meanwhile();
    child.stdin.write("yes\n");
    return await done;
  } finally {
    clearTimeout(timer);
    child.stdin.end();
  }
}
