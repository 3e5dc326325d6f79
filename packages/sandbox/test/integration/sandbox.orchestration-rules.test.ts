import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type OrchestrationRule, type Sandbox, startSandbox } from "../../src/index.ts";
import { admin, adminOk, rulePath, send } from "../helpers/sandbox-api.ts";
import { assertProblem, tokenFor } from "../helpers/sandbox-http.ts";

const rule = (ref: string, extra: Record<string, unknown> = {}) => ({
  ref_id: ref,
  profile_id: "owner-1",
  source_asset: "USDC",
  destination_asset: "USD",
  source: { crypto: { network: "ETHEREUM" } },
  destination: { profile: { profile_id: "owner-1" } },
  ...extra,
});

describe("sandbox DELETE /v2/orchestration/rules/{id}", () => {
  let sandbox: Sandbox;
  let token: string;
  const seedRules = async (...rules: Record<string, unknown>[]) =>
    (await adminOk(sandbox, "POST", "/orchestration-rules", { items: rules }))
      .items as OrchestrationRule[];

  before(async () => {
    sandbox = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
    token = await tokenFor(sandbox);
  });
  after(() => sandbox.close());

  it("answers {rule} with the deleted rule, every field, status DELETED", async () => {
    const [seeded] = await seedRules(
      rule("r-fields", {
        nickname: "ETH to USD conversion",
        identity_id: "id-9",
        account_id: "acct-9",
        created_at: "2024-02-02T02:02:02Z",
      }),
    );
    const res = await send(sandbox, token, "DELETE", rulePath(seeded!.id));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body), ["rule"]);
    const r = res.body.rule as OrchestrationRule;
    assert.deepEqual(r, { ...seeded, status: "DELETED" });
    assert.equal(r.ref_id, "r-fields");
    assert.equal(r.nickname, "ETH to USD conversion");
    assert.equal(r.profile_id, "owner-1");
    assert.equal(r.identity_id, "id-9");
    assert.equal(r.account_id, "acct-9");
    assert.equal(r.source_asset, "USDC");
    assert.equal(r.destination_asset, "USD");
    assert.equal(r.source.crypto?.network, "ETHEREUM");
    assert.match(r.source.crypto?.address ?? "", /^0x[0-9a-f]{40}$/);
    assert.equal(typeof r.source.crypto?.address_id, "string");
    assert.deepEqual(r.destination, { profile: { profile_id: "owner-1" } });
    assert.equal(r.created_at, "2024-02-02T02:02:02.000Z");
  });

  it("deletes rules with crypto, fiat and profile sources and destinations", async () => {
    const seeded = await seedRules(
      rule("r-fiat-in", {
        source: { fiat: { network: "WIRE" } },
        destination: { crypto: { network: "SOLANA", address: "So1anaAddre55" } },
      }),
      rule("r-profile-in", {
        source: { profile: { profile_id: "owner-2" } },
        destination: { fiat: { fiat_account_id: "bank-1", memo: "rent" } },
      }),
    );
    const [fiatIn, profileIn] = await Promise.all(
      seeded.map(
        async (s) =>
          (await send(sandbox, token, "DELETE", rulePath(s.id))).body.rule as OrchestrationRule,
      ),
    );
    assert.equal(fiatIn!.source.fiat?.network, "WIRE");
    assert.equal(typeof fiatIn!.source.fiat?.deposit_instructions_id, "string");
    assert.equal(typeof fiatIn!.source.fiat?.memo_id, "string");
    assert.deepEqual(fiatIn!.destination, {
      crypto: { network: "SOLANA", address: "So1anaAddre55" },
    });
    assert.deepEqual(profileIn!.source, { profile: { profile_id: "owner-2" } });
    assert.deepEqual(profileIn!.destination, { fiat: { fiat_account_id: "bank-1", memo: "rent" } });
  });

  it("answers 404 for an already deleted rule and for an unknown id, and deletes nothing else", async () => {
    const [target, bystander] = await seedRules(rule("r-once"), rule("r-bystander"));
    assert.equal((await send(sandbox, token, "DELETE", rulePath(target!.id))).status, 200);
    assertProblem(
      await send(sandbox, token, "DELETE", rulePath(target!.id)),
      404,
      new RegExp(`orchestration rule ${target!.id} not found: it was deleted at`),
    );
    assertProblem(
      await send(sandbox, token, "DELETE", rulePath("no-such-rule")),
      404,
      /orchestration rule no-such-rule not found$/,
    );
    const listed = (await adminOk(sandbox, "GET", "/orchestration-rules"))
      .items as OrchestrationRule[];
    assert.equal(listed.find((r) => r.id === bystander!.id)?.status, "ACTIVE");
    assert.equal(listed.find((r) => r.id === target!.id)?.status, "DELETED");
  });

  it("refuses rule seeds without exactly one variant, with a bad network or a taken ref_id, storing none", async () => {
    const bad: [Record<string, unknown>, number, RegExp][] = [
      [
        rule("r-x", { source: {} }),
        400,
        /source must hold exactly one of crypto, fiat or profile, got none/,
      ],
      [
        rule("r-x", { source: { crypto: { network: "ETHEREUM" }, fiat: {} } }),
        400,
        /got crypto, fiat/,
      ],
      [
        rule("r-x", { destination: { crypto: { network: "DOGE", address: "d" } } }),
        400,
        /destination\.crypto\.network must be one of BITCOIN/,
      ],
      [
        rule("r-x", { destination: { fiat: {} } }),
        400,
        /destination\.fiat\.fiat_account_id is required/,
      ],
      [rule("r-x", { source_asset: "usdc" }), 400, /source_asset must be an asset code/],
      [rule("r-x", { ref_id: undefined }), 400, /ref_id is required/],
      [rule("r-bystander"), 409, /ref_id "r-bystander" already exists/],
    ];
    const before = (await adminOk(sandbox, "GET", "/orchestration-rules")).items.length;
    for (const [body, status, detail] of bad) {
      assertProblem(
        await admin(sandbox, "POST", "/orchestration-rules", {
          items: [rule("r-ok-but-batched"), body],
        }),
        status,
        detail,
      );
    }
    assert.equal(
      (await adminOk(sandbox, "GET", "/orchestration-rules")).items.length,
      before,
      "no partial batch",
    );
  });
});
