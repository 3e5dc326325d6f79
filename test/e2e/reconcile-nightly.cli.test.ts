/**
 * Nightly reconciles over one long-running sandbox (issue 33): each night's world is changed by
 * hand through the public API and the sandbox's admin surface, and each reconcile must tell
 * exactly what changed outside the tool, what it undid, what is new and resolved against the
 * previous night after its actions, and exit under `--exit-on changes` accordingly.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "controls-sandbox";
import { startSandbox } from "controls-sandbox";
import { admin, CONTROLS, call, createControl, tokenFor } from "controls-sandbox/test-helpers";
import { sql } from "kysely";
import { prng, uuidFrom } from "../../src/contract/index.ts";
import { runCliIn } from "../helpers/cli-in-dir.ts";
import { backends, type TestTarget } from "../helpers/db.ts";
import { sourceTarget } from "../helpers/read-world.ts";

const rand = prng(3303);
const id = Object.fromEntries("UVWXYZMN".split("").map((k) => [k, uuidFrom(rand)])) as Record<
  string,
  string
>;
/**
 * [key, user_disabled, admin_disabled]; V holds a SERVICE SELL_ONLY, Y and M are clean. N is on the
 * platform only, until night 5 adds its row.
 */
const SOURCE: [string, boolean, boolean][] = [
  ["U", true, false],
  ["V", false, true],
  ["W", true, false],
  ["X", true, false],
  ["Y", false, false],
  ["Z", true, false],
  ["M", false, false],
];

const zeroOutside = {
  control_added: 0,
  control_removed: 0,
  control_changed: 0,
  flag_set: 0,
  flag_cleared: 0,
  source_row_added: 0,
  source_row_removed: 0,
  identity_appeared: 0,
  identity_vanished: 0,
  platform_field_set: 0,
  platform_field_cleared: 0,
};

for (const backend of backends) {
  describe(`five nightly reconciles over one sandbox on ${backend.name}`, () => {
    let sandbox: Sandbox;
    let target: TestTarget;
    let env: Record<string, string>;
    let token: string;
    const dir = mkdtempSync(join(tmpdir(), "cm-nightly-"));
    let night = 0;

    const reconcile = async (...extra: string[]) => {
      night += 1;
      const r = await runCliIn(
        dir,
        [
          "reconcile",
          "--yes",
          "--json",
          "--no-progress",
          "--prune",
          "--exit-on",
          "changes",
          "--out",
          join(dir, `night-${night}`),
          ...extra,
          ...target.args,
        ],
        env,
      );
      assert.ok(r.stdout.trim().startsWith("{"), `night ${night}: ${r.stderr}`);
      return { code: r.code, summary: JSON.parse(r.stdout), stderr: r.stderr };
    };
    const active = (k: string) =>
      sandbox.controlsOf(id[k]!).filter((c) => c.type === "SELL_ONLY" && !c.deleted_at);
    const expectNight = (
      got: Awaited<ReturnType<typeof reconcile>>,
      want: {
        outside: Partial<typeof zeroOutside>;
        undone: number;
        added: number;
        resolved: number;
        exit: number;
      },
    ) => {
      const c = got.summary.changes;
      assert.deepEqual(c.outside, { ...zeroOutside, ...want.outside }, got.stderr);
      assert.equal(
        c.outside_total,
        Object.values(want.outside).reduce((n, v) => n + v, 0),
      );
      assert.equal(c.undone_total, want.undone);
      assert.equal(c.new_findings, want.added, "new_findings");
      assert.equal(c.resolved_findings, want.resolved, "resolved_findings");
      assert.equal(got.code, want.exit, got.stderr);
    };

    before(async () => {
      sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
      sandbox.seedIdentities(
        [...SOURCE, ["N", false, false] as const].map(([k, u, a]) => ({
          id: id[k]!,
          user_disabled: u,
          admin_disabled: a,
        })),
        { migratedFraction: 0, driftFraction: 0 },
      );
      sandbox.addControl(id.V!, { type: "SELL_ONLY", set_by: "SERVICE", is_overridable: false });
      target = await sourceTarget(
        backend,
        SOURCE.map(([k, u, a]) => [id[k]!, u, a] as const),
      );
      env = {
        API_BASE_URL: sandbox.apiUrl,
        OAUTH_TOKEN_URL: sandbox.tokenUrl,
        OAUTH_CLIENT_ID: sandbox.credentials.clientId,
        OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
      };
      token = await tokenFor(sandbox);
    });
    after(async () => {
      await sandbox.close();
      await target.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("each night reports exactly the outside changes, the undone writes, the new and resolved findings and the exit code that --exit-on changes gives", async () => {
      // Night 1: the first reconcile creates the four missing controls; nothing to compare with.
      const n1 = await reconcile("--state", "bulk");
      assert.equal(n1.summary.changes.since_run_id, null);
      expectNight(n1, { outside: {}, undone: 0, added: 4, resolved: 0, exit: 0 });
      assert.equal(n1.summary.outcomes["succeeded:created"], 4);

      // Night 2: nobody changed anything; the tool's own fixes of night 1 are not "resolved".
      const n2 = await reconcile("--state", "bulk");
      assert.equal(n2.summary.changes.since_run_id, n1.summary.run_id);
      expectNight(n2, { outside: {}, undone: 0, added: 0, resolved: 0, exit: 0 });

      // Night 3: someone deletes our control on X and adds a CLIENT SELL_ONLY on clean Y.
      const handEdits = async () => {
        const ours = active("X");
        assert.equal(ours.length, 1);
        const del = await call(sandbox, token, "DELETE", CONTROLS, {
          query: { control_id: ours[0]!.id },
        });
        assert.equal(del.status, 200, del.text);
        await createControl(sandbox, token, id.Y!);
      };
      await handEdits();
      const n3 = await reconcile("--state", "bulk");
      expectNight(n3, {
        outside: { control_removed: 1, control_added: 1 },
        undone: 1,
        added: 2,
        resolved: 0,
        exit: 2,
      });
      assert.equal(active("X").length, 1, "the control on X is back");
      assert.equal(active("Y").length, 0, "the control on Y is pruned");

      // Night 4: the same hand edits: X's writes were undone twice, it is contested and left alone.
      await handEdits();
      const n4 = await reconcile("--state", "bulk");
      expectNight(n4, {
        outside: { control_removed: 1, control_added: 1 },
        undone: 2,
        added: 3,
        resolved: 0,
        exit: 2,
      });
      assert.equal(n4.summary.findings.contested, 1);
      assert.equal(n4.summary.outcomes["skipped:contested"], 1);
      assert.equal(active("X").length, 0, "the tool stops fighting over X");
      assert.equal(active("Y").length, 0, "Y, undone once, is still pruned");

      // Night 5: Z's source row is deleted, the platform forgets W and drops V's SERVICE control;
      // a flagged row is added for N (no run ever stored or looked it up) and clean M is flagged.
      const h = await target.open({ migrate: false });
      await sql`delete from identities where id = ${id.Z!}`.execute(h.db);
      await sql`insert into identities values (${id.N!}, true, false)`.execute(h.db);
      await sql`update identities set user_disabled = true where id = ${id.M!}`.execute(h.db);
      await h.close();
      assert.equal((await admin(sandbox, "DELETE", `/identities/${id.W!}`)).status, 204);
      const service = active("V");
      assert.equal(service.length, 1);
      const v = await admin(sandbox, "DELETE", `/controls/${service[0]!.id}`);
      assert.equal(v.status, 200, v.text);
      const n5 = await reconcile("--state", "bulk", "--prune-orphans");
      expectNight(n5, {
        outside: {
          source_row_removed: 1,
          identity_vanished: 1,
          control_removed: 1,
          source_row_added: 1,
          flag_set: 1,
        },
        undone: 0,
        added: 5,
        resolved: 0,
        exit: 2,
      });
      assert.equal(n5.summary.findings.orphaned_own_control, 1);
      assert.equal(n5.summary.findings.identity_not_found, 1);
      assert.equal(n5.summary.findings.awaiting_platform_migration, 1);
      assert.equal(n5.summary.outcomes["succeeded:deleted"], 1);
      assert.equal(n5.summary.outcomes["succeeded:created"], 2, "M's and N's controls");
      assert.equal(active("Z").length, 0, "--prune-orphans removed our control on Z");

      // Night 5, again with the filtered strategy: the same finding for W, and nothing sent to it.
      const creates = sandbox.stats().writes.creates;
      const n6 = await reconcile("--state", "filtered");
      expectNight(n6, { outside: {}, undone: 0, added: 0, resolved: 0, exit: 0 });
      assert.equal(n6.summary.findings.identity_not_found, 1);
      assert.equal(n6.summary.findings.contested, 1);
      assert.equal(
        sandbox.stats().writes.creates,
        creates,
        "no create sent (W remembered, X contested)",
      );
      const csv = readFileSync(join(dir, "night-5", "changes.csv"), "utf8");
      assert.match(csv, new RegExp(`${id.Z!},source_row_removed`));
      const added = `${id.N!},source_row_added,,,false,"user_disabled true, admin_disabled false",`;
      assert.match(
        csv,
        new RegExp(`${added}\\d{4}-\\d\\d-\\d\\dT`),
        "N's row, and when it was seen",
      );
      assert.match(csv, new RegExp(`${id.M!},flag_set,,CLIENT,false,user_disabled,`));
      const show = await runCliIn(dir, ["show", id.Z!, ...target.args], env);
      assert.equal(show.code, 0, show.stderr);
      assert.match(
        show.stdout,
        /source {4}the row was deleted \(first seen missing at \S+, since run \S+\)/,
      );
      assert.match(show.stdout, /finding {3}orphaned_own_control/);
      const showX = await runCliIn(dir, ["show", id.X!, ...target.args], env);
      assert.match(
        showX.stdout,
        /outside {3}control_removed control \S+ CLIENT undid the tool's write/,
      );
      assert.match(showX.stdout, /action {4}create SELL_ONLY succeeded created/);
    });
  });
}
