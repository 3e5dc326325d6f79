/**
 * `--state auto` through the CLI against the sandbox over real HTTP: it compares the costs, says
 * what it chose and why, and never chooses a strategy blind to what the run must act on. The
 * dataset makes per-identity the cheapest read (two flagged identities against three listing
 * pages) while a stale client control sits on an identity with no flag, which only a listing
 * sees; one flagged identity holds no control, so per-identity reads it by id for the platform's
 * legacy fields (issue 27).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { prng, uuidFrom } from "../../src/contract/index.ts";
import { runCli } from "../helpers/cli.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { sourceTarget } from "../helpers/read-world.ts";

const rand = prng(1212);
const uuid = () => uuidFrom(rand);
/** A flagged identity: user_disabled, its client control in place. */
const A = uuid();
/** No flag, a stale overridable client control: what --prune must delete. */
const Z = uuid();
/** No flag, a SERVICE control each (report only): enough SELL_ONLY holders for three pages. */
const SERVICE_HELD = Array.from({ length: 2000 }, uuid);
/**
 * admin_disabled here and on the platform, no control: the platform will migrate it
 * (`awaiting_platform_migration`), which only its legacy field, read by id, tells.
 */
const B = uuid();

const requests = (s: Sandbox) =>
  Object.values(s.stats().requests).reduce(
    (n, byStatus) => n + Object.values(byStatus).reduce((a, b) => a + b, 0),
    0,
  );

for (const backend of backends) {
  describe(`--state auto through the CLI on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    const out = mkdtempSync(join(tmpdir(), "cm-auto-"));
    const cli = (args: string[]) =>
      runCli([...args, "--json", ...target.args, "--no-progress"], env);

    before(async () => {
      sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      const rows = [
        { id: A, user_disabled: true, admin_disabled: false },
        { id: Z, user_disabled: false, admin_disabled: false },
        { id: B, user_disabled: false, admin_disabled: true },
        ...SERVICE_HELD.map((id) => ({ id, user_disabled: false, admin_disabled: false })),
      ];
      sandbox.seedIdentities(rows, { migratedFraction: 0, driftFraction: 0 });
      sandbox.addControl(A, { type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true });
      sandbox.addControl(Z, { type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true });
      for (const id of SERVICE_HELD) {
        sandbox.addControl(id, { type: "SELL_ONLY", set_by: "SERVICE", is_overridable: false });
      }
      target = await sourceTarget(
        backend,
        rows.map((r) => [r.id, r.user_disabled, r.admin_disabled] as const),
      );
      env = {
        API_BASE_URL: sandbox.apiUrl,
        OAUTH_TOKEN_URL: sandbox.tokenUrl,
        OAUTH_CLIENT_ID: sandbox.credentials.clientId,
        OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
      };
    });

    after(async () => {
      await sandbox?.close();
      await target?.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it("plan reads per identity when its two candidates cost fewer requests than any listing, and says why", async () => {
      const r = await cli(["plan", "--out", join(out, "plan")]);
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(r.stdout);
      assert.equal(s.strategy, "per-identity");
      const line = r.stderr.split("\n").find((l) => l.includes("Reading platform state"));
      assert.match(
        line ?? "",
        /Reading platform state with the per-identity strategy: ≈ 2 requests, [\d.]+ s at \d+ rps \(auto\)/,
      );
      assert.ok((line ?? "").length < 160, `one short line: ${line}`);
      assert.match(
        s.platform_state.reason,
        /^auto: per-identity 2 GETs on \/v2\/identity\/controls .* < bulk ≈ 3 listing requests/,
      );
      assert.match(s.platform_state.reason, /filtered ≈ 3 listing requests/);
      assert.equal(s.findings.unexpected_client_control, 0, "per-identity never reads Z");
    });

    it("at --log-level debug the log also carries the costs compared, as summary.json does", async () => {
      const r = await cli(["plan", "--log-level", "debug", "--out", join(out, "debug")]);
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(r.stdout);
      assert.ok(r.stderr.includes(`Platform state strategy: ${s.platform_state.reason}`), r.stderr);
    });

    it("per-identity reads by id the candidate whose controls leave its flag without a control, and classifies it three-way with the platform's legacy field", async () => {
      const r = await cli(["plan", "--state", "per-identity", "--out", join(out, "by-id")]);
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(r.stdout);
      assert.equal(s.requests["GET /v2/identity/controls"].count, 2, "A and B");
      assert.equal(s.requests["GET /v2/identity/identities/{id}"].count, 1, "B only");
      assert.match(r.stderr, /read 1 identity by id for the platform's legacy fields/);
      // Without its legacy field, B would be missing_service_control (exit 2).
      assert.equal(s.findings.awaiting_platform_migration, 1);
      assert.equal(s.findings.missing_service_control, 0);
      assert.equal(s.findings.in_sync, 1, "A");
    });

    it("--state per-identity with --prune is refused before any request, naming what it would miss", async () => {
      const before = requests(sandbox);
      const r = await cli(["reconcile", "--yes", "--prune", "--state", "per-identity"]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /--state per-identity cannot be combined with --prune/);
      assert.match(r.stderr, /stale client control on an identity whose flags are both false/);
      assert.equal(requests(sandbox), before);
    });

    it("reconcile --prune with auto lists the platform instead, and deletes the stale client control of the identity without a flag", async () => {
      const r = await cli([
        "reconcile",
        "--yes",
        "--prune",
        "--exit-on",
        "any",
        "--out",
        join(out, "prune"),
      ]);
      assert.equal(r.code, 2, r.stderr); // the SERVICE controls are report-only
      const s = JSON.parse(r.stdout);
      assert.ok(["bulk", "filtered"].includes(s.strategy), s.strategy);
      assert.match(s.platform_state.reason, /per-identity is ruled out/);
      assert.equal(s.outcomes["succeeded:deleted"], 1);
      assert.deepEqual(
        sandbox.controlsOf(Z).filter((c) => c.type === "SELL_ONLY"),
        [],
        "Z's stale control is gone",
      );
      assert.equal(sandbox.controlsOf(A).length, 1, "A keeps its control");
    });

    it("a later run sizes the listings from the previous run's listing instead of probing", async () => {
      const r = await cli(["plan", "--out", join(out, "again")]);
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(r.stdout);
      assert.match(s.platform_state.reason, /from the listing of run \d{8}-\d{6}-[0-9a-f]{4}/);
      assert.equal(s.requests["GET /v2/identity/identities"], undefined, "no probe was sent");
    });
  });
}
