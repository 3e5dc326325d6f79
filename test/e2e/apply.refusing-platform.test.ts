/**
 * `apply` against a platform that answers every create with 429 forever: with `Retry-After: -5`
 * (malformed, so the --penalty-s applies, never 0) and with no Retry-After at all. The run stops
 * within --max-refused-s (small here, so the test takes seconds), says what the platform answered
 * and for how long, records its counts, and a resume against a healthy platform finishes it.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { runCli } from "../helpers/cli.ts";
import { seededTarget } from "../helpers/cli-rig.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { startHostilePlatform } from "../helpers/hostile-platform.ts";

const N = 60;
const SEED = 11;
const IDS = [...syntheticIdentities(N, SEED)].map((r) => r.id);
const LIMIT_S = 3;

for (const backend of backends) {
  for (const header of ["-5", null] as const) {
    const answered = header === null ? "no Retry-After" : `Retry-After ${header}`;
    describe(`apply against creates answered 429 forever (${answered}) on ${backend.name}`, {
      timeout: 300_000,
    }, () => {
      let target: TestTarget;
      let root: string;
      before(async () => {
        target = await seededTarget(backend, { identities: N, seed: SEED });
        root = mkdtempSync(join(tmpdir(), "cm-refusing-"));
      });
      after(async () => {
        await target.drop();
        rmSync(root, { recursive: true, force: true });
      });

      it(`stops with exit 1 after --max-refused-s ${LIMIT_S} of refusals, a handful of tries at the penalty apart, naming the answers and their span; runs shows its counts; the resume against a healthy platform finishes it`, async () => {
        // One platform that refuses, then heals: a resume is bound to the platform it started with.
        let healed = false;
        let created = 0;
        const refusing = await startHostilePlatform({
          identities: IDS,
          createControl: (req, reply) => {
            if (healed) {
              const body = req.body as { type: string; reason_code: string };
              created += 1;
              // The contract's answer to a create (200): any other is verified by a read.
              return reply.code(200).send({
                id: `ctl-${created}`,
                type: body.type,
                set_by: "SET_BY_CLIENT",
                is_overridable: true,
                reason_code: body.reason_code,
                reason: null,
                created_at: new Date().toISOString(),
                deleted_at: null,
              });
            }
            if (header !== null) reply.header("retry-after", header);
            return reply.code(429).send({ title: "Too Many Requests" });
          },
        });
        let runId: string;
        try {
          const r = await runCli(
            [
              "apply",
              "--yes",
              "--no-progress",
              "--state",
              "bulk",
              "--max-refused-s",
              String(LIMIT_S),
              "--penalty-s",
              "1",
              "--out",
              join(root, "refused"),
              ...target.args,
            ],
            refusing.env,
          );
          assert.equal(r.code, 1, r.stderr);
          assert.match(
            r.stderr,
            new RegExp(
              `POST /v2/identity/controls: the platform refused every request for ${LIMIT_S} s since \\S+ \\(\\d+ × 429; the last: 429 with ${header === null ? "no Retry-After" : `Retry-After "${header}"`}\\), with no success between: that reaches --max-refused-s ${LIMIT_S}`,
            ),
          );
          runId = /Run (\S+) \(apply\) started/.exec(r.stderr)?.[1] as string;
          assert.ok(runId, r.stderr);
          // A penalty of 1 s between tries, never "retry at once": a handful of creates, not hundreds.
          const tries = refusing.calls["POST /v2/identity/controls"] ?? 0;
          assert.ok(tries >= 2 && tries <= 8 * LIMIT_S + 8, `${tries} creates tried`);
        } catch (err) {
          await refusing.close();
          throw err;
        }
        const runs = await runCli(["runs", "--json", ...target.args]);
        const row = runs.stdout
          .trim()
          .split("\n")
          .map(
            (l) =>
              JSON.parse(l) as {
                id: string;
                status: string;
                counts: Record<string, number> | null;
              },
          )
          .find((x) => x.id === runId);
        assert.equal(row?.status, "failed", runs.stdout);
        assert.ok(row?.counts !== null && row?.counts !== undefined, "counts are recorded, not -");

        healed = true;
        const healthy = refusing;
        try {
          const resumed = await runCli(
            [
              "apply",
              "--yes",
              "--no-progress",
              "--resume",
              runId,
              "--out",
              join(root, "resumed"),
              ...target.args,
            ],
            healthy.env,
          );
          assert.equal(resumed.code, 0, resumed.stderr.slice(-3000));
          assert.ok(created > 0, "the resume sent the creates, and the healed platform made them");
        } finally {
          await healthy.close();
        }
      });
    });
  }
}
