import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { type Sandbox, startSandbox, type TransferRecord } from "../../src/index.ts";
import { admin, adminOk, INTERNAL_TRANSFER, send } from "../helpers/sandbox-api.ts";
import { assertProblem, tokenFor } from "../helpers/sandbox-http.ts";

const A = "profile-a";
const B = "profile-b";

describe("sandbox POST /v2/transfer/internal", () => {
  let sandbox: Sandbox;
  let token: string;

  const transfer = (body: Record<string, unknown>) =>
    send(sandbox, token, "POST", INTERNAL_TRANSFER, {
      from_profile_id: A,
      to_profile_id: B,
      asset: "BTC",
      ...body,
    });
  const balance = async (profile: string, asset = "BTC") => {
    const items = (await adminOk(sandbox, "GET", `/balances?profile_id=${profile}`)).items as {
      asset: string;
      available: string;
    }[];
    return items.find((b) => b.asset === asset)?.available ?? "0";
  };
  const setBalances = (a: string, b: string) =>
    adminOk(sandbox, "POST", "/balances", {
      items: [
        { profile_id: A, asset: "BTC", amount: a },
        { profile_id: B, asset: "BTC", amount: b },
      ],
    });

  before(async () => {
    sandbox = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
    token = await tokenFor(sandbox);
  });
  beforeEach(async () => {
    await setBalances("10", "0");
    await adminOk(sandbox, "PUT", "/transfer-fees", {});
  });
  after(() => sandbox.close());

  it("moves the amount and answers the sender's DEBIT record with fee, total and group_id", async () => {
    const res = await transfer({
      amount: "0.05",
      ref_id: "first",
      metadata: { my_id: "4024ee50" },
      from_identity_id: "id-a",
      from_account_id: "acct-a",
    });
    assert.equal(res.status, 200, res.text);
    const debit = res.body as TransferRecord;
    assert.equal(debit.profile_id, A);
    assert.equal(debit.direction, "DEBIT");
    assert.equal(debit.type, "INTERNAL_TRANSFER_DEBIT");
    assert.equal(debit.status, "COMPLETED");
    assert.equal(debit.amount, "0.05");
    assert.equal(debit.fee, "0");
    assert.equal(debit.total, "0.05");
    assert.equal(debit.asset, "BTC");
    assert.equal(debit.ref_id, "first");
    assert.deepEqual(debit.metadata, { my_id: "4024ee50" });
    assert.equal(debit.identity_id, "id-a");
    assert.equal(debit.account_id, "acct-a");
    assert.match(debit.group_id, /^[0-9a-f-]{36}$/);
    assert.equal(await balance(A), "9.95");
    assert.equal(await balance(B), "0.05");
  });

  it("records the CREDIT on the receiving profile, linked by the group_id", async () => {
    const res = await transfer({
      amount: "1.25",
      recipient_metadata: { note: "for b" },
      to_identity_id: "id-b",
      to_account_id: "acct-b",
    });
    const debit = res.body as TransferRecord;
    const group = (await adminOk(sandbox, "GET", `/transfers?group_id=${debit.group_id}`))
      .items as TransferRecord[];
    assert.equal(group.length, 2);
    const credit = group.find((r) => r.direction === "CREDIT")!;
    assert.deepEqual(
      group.find((r) => r.direction === "DEBIT"),
      debit,
    );
    assert.equal(credit.profile_id, B);
    assert.equal(credit.type, "INTERNAL_TRANSFER_CREDIT");
    assert.equal(credit.amount, "1.25");
    assert.equal(credit.total, "1.25");
    assert.equal(credit.group_id, debit.group_id);
    assert.notEqual(credit.id, debit.id);
    assert.deepEqual(credit.metadata, { note: "for b" });
    assert.equal(credit.identity_id, "id-b");
    assert.equal(credit.account_id, "acct-b");
    const ofB = (await adminOk(sandbox, "GET", `/transfers?profile_id=${B}`))
      .items as TransferRecord[];
    assert.ok(ofB.some((r) => r.id === credit.id));
  });

  it("charges the sender amount + fee from the fee table, computed without floating point", async () => {
    await adminOk(sandbox, "PUT", "/transfer-fees", { BTC: "0.1" });
    const res = await transfer({ amount: "0.2" });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.fee, "0.1");
    assert.equal(res.body.total, "0.3", "0.2 + 0.1 is exactly 0.3 (0.30000000000000004 in floats)");
    assert.equal(await balance(A), "9.7");
    assert.equal(await balance(B), "0.2", "the receiver gets the amount, the fee is the sender's");
  });

  it("keeps balances exact to 18 decimals over many small transfers", async () => {
    for (let i = 0; i < 10; i++) assert.equal((await transfer({ amount: "0.1" })).status, 200);
    assert.equal(await balance(B), "1");
    assert.equal(await balance(A), "9");
    await transfer({ amount: "0.000000000000000001" });
    assert.equal(await balance(A), "8.999999999999999999");
    assert.equal(await balance(B), "1.000000000000000001");
  });

  it("accepts amounts of the platform's pattern and refuses any other with 400", async () => {
    await setBalances("100000000000000000000000", "0");
    for (const amount of [
      "1",
      "0.5",
      ".5",
      "007.25",
      "0.000000000000000001",
      "12345678901234567890.123456789012345678",
    ]) {
      const res = await transfer({ amount });
      assert.equal(res.status, 200, `${amount}: ${res.text}`);
      assert.match(res.body.amount, /^(0|[1-9]\d*)(\.\d*[1-9])?$/);
    }
    const refused: [unknown, RegExp][] = [
      [0.5, /not a JSON number/],
      ["1e3", /must match \^\[0-9\]\*/],
      ["-1", /must match/],
      ["+1", /must match/],
      ["1.", /must match/],
      ["1.2.3", /must match/],
      [" 1", /must match/],
      ["abc", /must match/],
      ["0", /greater than 0/],
      ["0.000", /greater than 0/],
      ["0.0000000000000000001", /19 decimals; at most 18/],
      ["", /amount must match \^\[0-9\]\*/],
      [undefined, /amount is required/],
    ];
    for (const [amount, detail] of refused) {
      assertProblem(await transfer({ amount }), 400, detail);
    }
  });

  it("takes metadata and recipient_metadata of up to 6 pairs of at most 100 characters, and refuses more", async () => {
    const k = (i: number) => `${String(i).padStart(3, "0")}${"k".repeat(97)}`;
    const full = Object.fromEntries([1, 2, 3, 4, 5, 6].map((i) => [k(i), "v".repeat(100)]));
    const ok = await transfer({ amount: "1", metadata: full, recipient_metadata: full });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.metadata, full);
    for (const field of ["metadata", "recipient_metadata"]) {
      const refused: [unknown, RegExp][] = [
        [{ ...full, extra: "x" }, new RegExp(`${field} has 7 pairs; at most 6`)],
        [{ ["k".repeat(101)]: "v" }, new RegExp(`${field} keys must have 1 to 100 characters`)],
        [{ key: "v".repeat(101) }, new RegExp(`${field}\\.key has 101 characters; at most 100`)],
        [{ key: 5 }, new RegExp(`${field}\\.key must be a string`)],
        [["a", "b"], new RegExp(`${field} must be a JSON object`)],
      ];
      for (const [value, detail] of refused) {
        assertProblem(await transfer({ amount: "1", [field]: value }), 400, detail);
      }
    }
    assert.equal(await balance(A), "9", "only the valid transfer moved funds");
  });

  it("refuses a reused ref_id with 409 already-exists, whatever the body, and moves the funds once", async () => {
    const first = await transfer({ amount: "4", ref_id: "replay-me" });
    assert.equal(first.status, 200);
    // The same ref_id with another amount, then after the sender can no longer afford it.
    const again = await transfer({ amount: "5", ref_id: "replay-me" });
    assertProblem(again, 409, /a transfer with ref_id "replay-me" already exists/);
    assert.equal(again.body.type, "https://api.SERVICE.example/v2/problems/already-exists");
    assert.match(again.body.detail, new RegExp(first.body.id));
    await transfer({ amount: "6" });
    assert.equal(await balance(A), "0");
    const late = await transfer({ amount: "4", ref_id: "replay-me" });
    assertProblem(late, 409, /already exists/);
    assert.equal(await balance(B), "10");
    const group = (await adminOk(sandbox, "GET", `/transfers?group_id=${first.body.group_id}`))
      .items;
    assert.equal(group.length, 2, "one debit and one credit, never a second transfer");
  });

  it("refuses an overdraft with 403 insufficient-funds whose meta names available and needed amounts, and moves nothing", async () => {
    await adminOk(sandbox, "PUT", "/transfer-fees", { BTC: "0.001" });
    const res = await transfer({ amount: "10" });
    assertProblem(
      res,
      403,
      /insufficient BTC funds in profile profile-a: 10\.001 needed \(amount 10 \+ fee 0\.001\), 10 available/,
    );
    assert.equal(
      res.body.type,
      "https://developer.SERVICE.example/docs/v2/problems/insufficient-funds",
    );
    assert.deepEqual(res.body.meta, {
      profile_id: A,
      asset: "BTC",
      available: "10",
      needed: "10.001",
    });
    assertProblem(await transfer({ amount: "1", asset: "ETH" }), 403, /0 available/);
    assert.equal(await balance(A), "10");
    assert.equal(await balance(B), "0");
    assert.equal(
      (await transfer({ amount: "9.999" })).status,
      200,
      "exactly the balance is allowed",
    );
    assert.equal(await balance(A), "0");
  });

  it("answers 404 for an unknown sender or receiver profile", async () => {
    assertProblem(
      await transfer({ amount: "1", from_profile_id: "ghost" }),
      404,
      /from_profile_id: profile ghost not found/,
    );
    assertProblem(
      await transfer({ amount: "1", to_profile_id: "ghost" }),
      404,
      /to_profile_id: profile ghost not found/,
    );
    assert.equal(await balance(A), "10");
  });

  it("refuses missing or malformed fields with 400 naming them", async () => {
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ amount: "1", from_profile_id: undefined }, /from_profile_id is required/],
      [{ amount: "1", to_profile_id: "" }, /to_profile_id is required/],
      [{ amount: "1", asset: undefined }, /asset is required/],
      [{ amount: "1", asset: "btc" }, /asset must be an asset code/],
      [{ amount: "1", to_profile_id: A }, /from_profile_id and to_profile_id must differ/],
      [{ amount: "1", from_profile_id: 42 }, /from_profile_id must be a string/],
      [{ amount: "1", memo: "hi" }, /unknown field "memo"/],
    ];
    for (const [body, detail] of refused) assertProblem(await transfer(body), 400, detail);
    assertProblem(
      await send(sandbox, token, "POST", INTERNAL_TRANSFER, ["not", "an", "object"]),
      400,
      /JSON object/,
    );
    const raw = await fetch(new URL(INTERNAL_TRANSFER, sandbox.apiUrl), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{not json",
    });
    assert.equal(raw.status, 400);
    assert.equal(await balance(A), "10");
  });

  it("commits a transfer whose answer the ambiguous fault drops, and a retry with its ref_id is told it already exists", async () => {
    sandbox.setFaults({ ambiguousRate: 1 });
    try {
      await assert.rejects(transfer({ amount: "3", ref_id: "lost-answer" }));
    } finally {
      sandbox.setFaults({ ambiguousRate: 0 });
    }
    assert.equal(await balance(A), "7", "the write was committed before the connection dropped");
    const replay = await transfer({ amount: "3", ref_id: "lost-answer" });
    assertProblem(replay, 409, /ref_id "lost-answer" already exists/);
    assert.equal(await balance(A), "7", "the retry did not move the funds twice");
  });

  it("refuses a balance seed that is negative or malformed, storing none of the batch", async () => {
    const res = await admin(sandbox, "POST", "/balances", {
      items: [
        { profile_id: A, asset: "BTC", amount: "99" },
        { profile_id: B, asset: "BTC", amount: "-1" },
      ],
    });
    assertProblem(res, 400, /items\[1\]: amount must match/);
    assert.equal(await balance(A), "10");
  });
});
