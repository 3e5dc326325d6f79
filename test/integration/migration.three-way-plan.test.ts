/**
 * `plan` against a sandbox whose legacy fields drifted from the source (`legacyDriftFraction`
 * 0.2), on every backend: the count of every three-way finding equals the truth computed from the
 * sandbox's own state, and the plan sends nothing.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { BROWSER_SKIP, openBrowser } from "../helpers/browser.ts";
import { runCli } from "../helpers/cli.ts";
import { seededTarget } from "../helpers/cli-rig.ts";
import { parseCsv } from "../helpers/corpus.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { sellOnlyOf, threeWayTruth } from "../helpers/three-way-truth.ts";

const IDENTITIES = 3000;
const SEED = 27;
const LEGACY_STILL_TRUE = "the platform's legacy user_disabled is still true";

for (const backend of backends) {
  describe(`plan against legacy drift 0.2 on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    const rows = [...syntheticIdentities(IDENTITIES, SEED)];
    const out = mkdtempSync(join(tmpdir(), "cm-three-way-plan-"));

    before(async () => {
      sandbox = await startSandbox({
        rateLimitRps: 0,
        tokenRateLimitRps: 0,
        legacyDriftFraction: 0.2,
      });
      const report = sandbox.seedIdentities(rows, { migratedFraction: 0.5, seed: SEED });
      assert.ok(report.legacyDrift.on > 0 && report.legacyDrift.off > 0);
      // Cells the seed alone does not reach: duplicates, a client control the platform's field
      // explains, a SERVICE control the source lacks.
      const pick = (test: (r: (typeof rows)[number]) => boolean) => rows.filter(test).slice(0, 4);
      for (const r of pick(
        (r) => r.user_disabled && sellOnlyOf(sandbox, r.id).client.length === 1,
      )) {
        sandbox.addControl(r.id, { type: "SELL_ONLY", is_overridable: true });
      }
      for (const r of pick((r) => !r.user_disabled && sandbox.legacyFieldsOf(r.id).user_disabled)) {
        sandbox.addControl(r.id, { type: "SELL_ONLY", is_overridable: true });
      }
      for (const r of pick(
        (r) => !r.admin_disabled && sandbox.legacyFieldsOf(r.id).admin_disabled,
      )) {
        sandbox.addControl(r.id, {
          type: "SELL_ONLY",
          set_by: "SET_BY_SERVICE",
          is_overridable: false,
        });
      }
      target = await seededTarget(backend, { identities: IDENTITIES, seed: SEED });
      env = {
        API_BASE_URL: sandbox.apiUrl,
        OAUTH_TOKEN_URL: sandbox.tokenUrl,
        OAUTH_CLIENT_ID: sandbox.credentials.clientId,
        OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
        // The default: wait for the platform's own migration (the test helpers' rehearsals do not).
        CONTROLS_WAIT_FOR_PLATFORM: "true",
      };
    });

    after(async () => {
      await sandbox?.close();
      await target?.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it("counts every three-way finding as the sandbox's own state says, and sends no write", async (t) => {
      const dir = join(out, "plan");
      const r = await runCli(
        ["plan", "--json", "--state", "bulk", "--no-progress", "--out", dir, ...target.args],
        env,
      );
      assert.equal(r.code, 2, r.stderr);
      const findings = JSON.parse(r.stdout).findings as Record<string, number>;
      const truth = threeWayTruth(sandbox, rows);
      const diff = parseCsv(readFileSync(join(dir, "diff.csv"), "utf8"));
      const legacyKept = diff.filter(
        (d) => d.finding === "unexpected_client_control" && d.outcome === LEGACY_STILL_TRUE,
      ).length;
      for (const [kind, n] of Object.entries(truth)) assert.ok(n > 0, `the seed reaches ${kind}`);
      assert.deepEqual(
        {
          awaiting_platform_migration: findings.awaiting_platform_migration,
          missing_client_control: findings.missing_client_control,
          platform_will_restrict: findings.platform_will_restrict,
          unexpected_client_control_legacy: legacyKept,
          duplicate_client_control: findings.duplicate_client_control,
          platform_unaware_of_admin_flag: findings.platform_unaware_of_admin_flag,
          source_behind_platform: findings.source_behind_platform,
        },
        truth,
      );
      assert.equal(sandbox.stats().writes.creates + sandbox.stats().writes.deletes, 0);
      t.diagnostic(`three-way findings = truth: ${JSON.stringify(truth)}`);
    });

    it("writes the platform's legacy fields of each identity in diff.csv, as the sandbox holds them", () => {
      const diff = parseCsv(readFileSync(join(out, "plan", "diff.csv"), "utf8"));
      const rows = diff.filter((d) => d.identity_id);
      assert.ok(rows.length > 100, `diff rows: ${rows.length}`);
      let drifted = 0;
      for (const d of rows) {
        const p = sandbox.legacyFieldsOf(d.identity_id as string);
        assert.equal(d.platform_user_disabled, String(p.user_disabled), d.identity_id);
        assert.equal(d.platform_admin_disabled, String(p.admin_disabled), d.identity_id);
        if (d.platform_user_disabled !== d.user_disabled) drifted += 1;
      }
      assert.ok(drifted > 0, "some rows show the platform's field apart from the source's");
    });

    it("shows in report.html, read in headless Chromium, the three-way table and the platform's own work left of summary.json", {
      skip: BROWSER_SKIP,
    }, async () => {
      const dir = join(out, "plan");
      const summary = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"));
      const browser = await openBrowser();
      try {
        const w = await browser.open(pathToFileURL(join(dir, "report.html")).href);
        // Text only in the page (tsx would name a helper defined there): parsed here.
        const texts = await w.page
          .locator("#three-way tbody tr")
          .evaluateAll((trs) =>
            trs.map((tr) => [...tr.querySelectorAll("td")].map((c) => c.textContent ?? "")),
          );
        const bool = (v: string | undefined) => (v === "?" ? null : v === "true");
        const cells = texts.map((td) => ({
          flag: td[0],
          source: bool(td[1]),
          platform: bool(td[2]),
          finding: td[3],
          count: Number(td[4]),
        }));
        assert.ok(cells.length > 0);
        assert.deepEqual(cells, summary.three_way.cells);
        const will = await w.page.locator("#platform-will").evaluate((p) => ({
          create_client_controls: Number(p.getAttribute("data-client")),
          create_service_controls: Number(p.getAttribute("data-service")),
          restrict_cleared_identities: Number(p.getAttribute("data-restrict")),
          text: p.textContent ?? "",
        }));
        const { text, ...counts } = will;
        assert.deepEqual(counts, summary.three_way.platform_will);
        assert.match(text, new RegExp(`create ${counts.create_client_controls} CLIENT`));
        assert.deepEqual(w.problems, []);
      } finally {
        await browser.close();
      }
    });
  });
}
