/**
 * `plan` through the CLI against a platform that answers as no platform should, on every backend:
 * it stops cleanly with a message that names the culprit, or copes and says what it saw.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { TOOL_TABLES } from "../../src/db/schema.ts";
import type { RunSummary } from "../../src/reports/summary.ts";
import { runCli } from "../helpers/cli.ts";
import { seededTarget } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { identityRecord, startHostilePlatform } from "../helpers/hostile-platform.ts";

const N = 40;
const IDS = [...syntheticIdentities(N, 3)].map((r) => r.id);
const STACK_LINE = /^\s+at .+\(.+:\d+:\d+\)$/m;

for (const backend of backends) {
  describe(`plan against a hostile platform on ${backend.name}`, { timeout: 120_000 }, () => {
    let target: TestTarget;
    let out: string;
    before(async () => {
      target = await seededTarget(backend, { identities: N, seed: 3 });
      out = mkdtempSync(join(tmpdir(), "cm-hostile-"));
    });
    after(async () => {
      await target.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it("an identity listed twice within one page is kept once, logged and counted in the summary; no SQL error", async () => {
      const p = await startHostilePlatform({
        identitiesList: async () => ({
          items: [...IDS, IDS[7]!].map(identityRecord),
          next_page_cursor: "",
        }),
      });
      try {
        const dir = join(out, "dup");
        // One cursor: a second one (opened when the page is slow to come, as on a loaded machine)
        // would be served the same page with its repeat, and rightly count that one too.
        const r = await runCli(
          [
            "plan",
            "--state",
            "bulk",
            "--listing-parallelism",
            "1",
            "--no-progress",
            "--json",
            "--out",
            dir,
            ...target.args,
          ],
          p.env,
        );
        assert.ok(r.code === 0 || r.code === 2, `exit ${r.code}: ${r.stderr}`);
        assert.doesNotMatch(r.stderr, /ON CONFLICT|cannot affect row a second time/);
        assert.match(
          r.stderr,
          new RegExp(
            `Platform anomaly: GET /v2/identity/identities served 1 identity record\\(s\\) twice within one page \\(first: "${IDS[7]}"\\)`,
          ),
        );
        const summary = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as RunSummary;
        assert.equal(summary.requests["GET /v2/identity/identities"]?.anomalies, 1, r.stderr);
        assert.equal(summary.source.rows_read, N);
      } finally {
        await p.close();
      }
    });

    it("a listing that serves the same identities under ever new cursors stops with exit 1, naming the endpoint, no stack trace", async () => {
      let n = 0;
      const p = await startHostilePlatform({
        identitiesList: async () => ({
          items: IDS.slice(0, 5).map(identityRecord),
          next_page_cursor: `c${++n}`,
        }),
      });
      try {
        const r = await runCli(
          ["plan", "--state", "bulk", "--no-progress", "--out", join(out, "loop"), ...target.args],
          p.env,
        );
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stderr, /ERROR GET \/v2\/identity\/identities: page 2 brought no item/);
        assert.doesNotMatch(r.stderr, STACK_LINE);
        // It stops at the first page that brought nothing new: at most two pages for each of the
        // listing's windows in flight (--listing-parallelism, 8 by default), never a loop.
        const pages = p.calls["GET /v2/identity/identities"] ?? 0;
        assert.ok(pages >= 2 && pages <= 16, `${pages} listing pages`);
        const h = await target.open();
        const failed = await h.db
          .selectFrom(TOOL_TABLES.runs)
          .select(["status", "error"])
          .where("status", "=", "failed")
          .execute()
          .finally(() => h.close());
        assert.equal(failed.length, 1, "the run is recorded as failed");
        assert.match(failed[0]?.error ?? "", /page 2 brought no item/);
      } finally {
        await p.close();
      }
    });

    it("a token endpoint asking to wait 3,000,000 s stops the run at once with exit 1 and says why", async () => {
      const p = await startHostilePlatform({
        token: (_req, reply) =>
          reply.code(429).header("retry-after", "3000000").send({ error: "slow_down" }),
      });
      try {
        const r = await runCli(
          ["plan", "--no-progress", "--out", join(out, "wait"), ...target.args],
          p.env,
        );
        assert.equal(r.code, 1, r.stderr);
        assert.match(
          r.stderr,
          /ERROR .*POST \/oauth2\/token: 429: the platform asked to wait 3000000 s \(Retry-After\).*--max-wait-s 900/,
        );
        assert.doesNotMatch(r.stderr, /TimeoutOverflowWarning/);
        assert.doesNotMatch(r.stderr, STACK_LINE);
        assert.equal(p.calls["POST /oauth2/token"], 1);
      } finally {
        await p.close();
      }
    });
  });
}
