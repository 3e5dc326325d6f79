/**
 * What only the platform itself may do, on the sandbox's admin surface (issue 33): delete any
 * control, a non-overridable one included, and remove an identity with its controls.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "../../src/index.ts";
import { startSandbox } from "../../src/index.ts";
import { admin } from "../helpers/sandbox-api.ts";
import { CONTROLS, call, IDENTITIES, tokenFor, walk } from "../helpers/sandbox-http.ts";

describe("the sandbox admin surface's deletes", () => {
  let sandbox: Sandbox;
  let token: string;
  before(async () => {
    sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
    sandbox.seedIdentities(
      [
        { id: "keep-1", user_disabled: false, admin_disabled: true },
        { id: "gone-1", user_disabled: true, admin_disabled: false },
      ],
      { migratedFraction: 0, driftFraction: 0 },
    );
    token = await tokenFor(sandbox);
  });
  after(() => sandbox.close());

  it("deletes a non-overridable SERVICE control that the public API refuses to delete, and says so when it is already deleted or unknown", async () => {
    const c = sandbox.addControl("keep-1", {
      type: "SELL_ONLY",
      set_by: "SERVICE",
      is_overridable: false,
    });
    const refused = await call(sandbox, token, "DELETE", CONTROLS, { query: { control_id: c.id } });
    assert.equal(refused.status, 403, refused.text);
    const done = await admin(sandbox, "DELETE", `/controls/${c.id}`);
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.id, c.id);
    assert.equal(typeof done.body.deleted_at, "string");
    assert.deepEqual(
      sandbox.controlsOf("keep-1").map((x) => x.id),
      [],
      "no active control is left",
    );
    assert.equal((await admin(sandbox, "DELETE", `/controls/${c.id}`)).status, 400);
    assert.equal((await admin(sandbox, "DELETE", "/controls/no-such-control")).status, 404);
  });

  it("removes an identity with its controls: its look-up answers 404 and no listing holds it", async () => {
    sandbox.addControl("gone-1", { type: "SELL_ONLY", set_by: "CLIENT", is_overridable: true });
    const removed = await admin(sandbox, "DELETE", "/identities/gone-1");
    assert.equal(removed.status, 204, removed.text);
    const lookUp = await call(sandbox, token, "GET", `${IDENTITIES}/gone-1`);
    assert.equal(lookUp.status, 404, lookUp.text);
    const listed = await walk(sandbox, token, IDENTITIES, { limit: "10" });
    const ids = listed.map((i: { id: string }) => i.id);
    assert.deepEqual(ids, ["keep-1"]);
    const holders = await walk(sandbox, token, IDENTITIES, {
      limit: "10",
      control_types: "SELL_ONLY",
    });
    assert.deepEqual(holders, []);
    assert.equal((await admin(sandbox, "DELETE", "/identities/gone-1")).status, 404);
    assert.equal(sandbox.stats().controls.active, 0);
  });
});
