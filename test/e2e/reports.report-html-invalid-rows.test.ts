/**
 * report.html shows an invalid source row where the source holds it and why it was refused (issue
 * 29 §2): the identity cell names the row as the source reader numbered it (`source row N`, the
 * run's `source_rows.seq`; `(no id)` when the id is NULL) and the outcome cell its reason, read
 * from the DOM in headless Chromium and compared with what the run stored.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { sql } from "kysely";
import { prng, uuidFrom } from "../../src/contract/index.ts";
import { BROWSER_SKIP, openBrowser, type TestBrowser } from "../helpers/browser.ts";
import { runCli } from "../helpers/cli.ts";
import { backends, type TestTarget } from "../helpers/db.ts";

const rand = prng(2902);
const [A, B, C] = [uuidFrom(rand), uuidFrom(rand), uuidFrom(rand)];
/** One clean flagged row between rows a reader refuses: NULL flag, NULL id, tab in id, bad flag. */
const ROWS: [string | null, string | null, string | null][] = [
  [A, "true", "false"],
  [B, null, "false"],
  [null, "true", "false"],
  ["tab\there", "true", "false"],
  [C, "maybe", "false"],
];

for (const backend of backends) {
  describe(`report.html's invalid source rows on ${backend.name}`, { skip: BROWSER_SKIP }, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let browser: TestBrowser;
    const dir = mkdtempSync(join(tmpdir(), "cm-invalid-rows-"));
    let stored: { seq: number; identity_id: string | null; reason: string }[] = [];

    before(async () => {
      sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      sandbox.seedIdentities(
        [A, B, C].map((id) => ({ id, user_disabled: false, admin_disabled: false })),
        { migratedFraction: 0, driftFraction: 0 },
      );
      target = await backend.target();
      const h = await target.open({ migrate: false });
      await sql`create table identities (id text, user_disabled text, admin_disabled text)`.execute(
        h.db,
      );
      for (const [id, u, a] of ROWS)
        await sql`insert into identities values (${id}, ${u}, ${a})`.execute(h.db);
      await h.close();
      const r = await runCli(["plan", "--no-progress", "--out", dir, ...target.args], {
        API_BASE_URL: sandbox.apiUrl,
        OAUTH_TOKEN_URL: sandbox.tokenUrl,
        OAUTH_CLIENT_ID: sandbox.credentials.clientId,
        OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
      });
      assert.equal(r.code, 2, r.stderr);
      const db = await target.open({ migrate: false });
      stored = (
        await sql<{ seq: number; identity_id: string | null; reason: string }>`
          select seq::int as seq, identity_id, anomaly || coalesce(': ' || anomaly_detail, '') as reason
          from controls_migration.source_rows
          where anomaly is not null and valid is not true order by seq`.execute(db.db)
      ).rows;
      await db.close();
      browser = await openBrowser();
    });

    after(async () => {
      await browser?.close();
      await sandbox.close();
      await target.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("each invalid source row shows its source row number and its reason, as the run stored them", async () => {
      assert.equal(stored.length, 4, "NULL flag, NULL id, tab in id, bad flag");
      const w = await browser.open(pathToFileURL(join(dir, "report.html")).href);
      const cells = await w.page
        .locator("#diff tbody tr")
        .evaluateAll((trs) =>
          trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)),
        );
      const invalid = cells.filter((c) => c[3] === "invalid_source_row");
      assert.deepEqual(
        invalid.map((c) => ({ identity: c[0], reason: c[8] })),
        stored.map((s) => ({
          identity: `${s.identity_id === null ? "(no id)" : `"${s.identity_id.replace("\t", "\\u0009")}"`} · source row ${s.seq}`,
          reason: s.reason,
        })),
      );
      assert.ok(
        invalid.some((c) => c[0]?.startsWith("(no id) · source row ")),
        "the NULL id is named by its row",
      );
      const clean = cells.filter((c) => c[3] !== "invalid_source_row");
      assert.ok(
        clean.some((c) => c[0] === A),
        "a valid row shows its id alone",
      );
      assert.deepEqual(w.problems, []);
      await w.page.close();
    });
  });
}
