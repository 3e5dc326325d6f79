/**
 * The sandbox's admin route for an identity's legacy fields (issue 27),
 * `PATCH /__sandbox/identities/{id}/legacy`: what the platform's own UI or a legacy client may
 * change while a run goes on, answered by the identity's reads from then on.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Sandbox } from "../../src/index.ts";
import { startSandbox } from "../../src/index.ts";
import { admin } from "../helpers/sandbox-api.ts";
import { call, IDENTITIES, tokenFor } from "../helpers/sandbox-http.ts";

describe("the sandbox admin surface's legacy fields", () => {
  let sandbox: Sandbox;
  let token: string;
  before(async () => {
    sandbox = await startSandbox({ port: 0, rateLimitRps: 0, tokenRateLimitRps: 0 });
    sandbox.seedIdentities([{ id: "legacy-1", user_disabled: false, admin_disabled: true }], {
      migratedFraction: 0,
      driftFraction: 0,
    });
    token = await tokenFor(sandbox);
  });
  after(() => sandbox.close());

  it("sets the fields given, keeps the others, answers them, and the identity's read carries them", async () => {
    const set = await admin(sandbox, "PATCH", "/identities/legacy-1/legacy", {
      user_disabled: true,
    });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body, { user_disabled: true, admin_disabled: true });
    const read = await call(sandbox, token, "GET", `${IDENTITIES}/legacy-1`);
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.user_disabled, true);
    assert.equal(read.body.admin_disabled, true);
    assert.deepEqual(sandbox.legacyFieldsOf("legacy-1"), {
      user_disabled: true,
      admin_disabled: true,
    });
  });

  it("refuses a field that is not a boolean (400) and an unknown identity (404), changing nothing", async () => {
    const before = sandbox.legacyFieldsOf("legacy-1");
    const bad = await admin(sandbox, "PATCH", "/identities/legacy-1/legacy", {
      admin_disabled: "no",
    });
    assert.equal(bad.status, 400, bad.text);
    assert.deepEqual(sandbox.legacyFieldsOf("legacy-1"), before);
    const unknown = await admin(sandbox, "PATCH", "/identities/nobody/legacy", {
      user_disabled: true,
    });
    assert.equal(unknown.status, 404, unknown.text);
  });
});
