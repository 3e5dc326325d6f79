import assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "../../src/index.ts";
import {
  assertProblem,
  CONTROLS,
  call,
  createControl,
  IDENTITIES,
  read,
  tokenFor,
} from "../helpers/sandbox-http.ts";

const NO_FAULTS = {
  latencyMs: 0,
  latencyJitterMs: 0,
  failRate: 0,
  hangRate: 0,
  ambiguousRate: 0,
};

describe("sandbox fault injection", () => {
  let sandbox: Sandbox;
  let token: string;
  let ids: string[];

  before(async () => {
    sandbox = await startSandbox({
      identities: 50,
      migratedFraction: 0,
      rateLimitRps: 0,
      tokenRateLimitRps: 0,
    });
    token = await tokenFor(sandbox);
    ids = (await call(sandbox, token, "GET", IDENTITIES)).body.items.map(
      (i: { id: string }) => i.id,
    );
  });
  afterEach(() => sandbox.setFaults(NO_FAULTS));
  after(() => sandbox.close());

  it("delays answers by the configured latency", async () => {
    sandbox.setFaults({ latencyMs: 150, latencyJitterMs: 50 });
    const started = performance.now();
    const res = await call(sandbox, token, "GET", `${IDENTITIES}/${ids[0]}`);
    const elapsed = performance.now() - started;
    assert.equal(res.status, 200);
    assert.ok(elapsed >= 145, `answered after ${elapsed.toFixed(0)} ms, expected >= 150`);
    assert.ok(sandbox.stats().faults.latency >= 1);
  });

  it("answers 5xx problems without committing the write", async () => {
    sandbox.setFaults({ failRate: 1 });
    const before = sandbox.stats().writes.creates;
    const res = await call(sandbox, token, "POST", CONTROLS, {
      body: { identity_id: ids[1], type: "SELL_ONLY", reason_code: "OTHER" },
    });
    assert.ok([500, 502, 503].includes(res.status), `got ${res.status}`);
    assertProblem(res, res.status, /injected fault/);
    assert.deepEqual(sandbox.controlsOf(ids[1]!, { includeDeleted: true }), []);
    assert.equal(sandbox.stats().writes.creates, before);
    assert.ok(sandbox.stats().faults.fail5xx >= 1);
  });

  it("leaves a request hanging until the client gives up, then serves the next one", async () => {
    sandbox.setFaults({ hangRate: 1 });
    await assert.rejects(
      call(sandbox, token, "GET", `${IDENTITIES}/${ids[0]}`, { signal: AbortSignal.timeout(300) }),
      (err: Error) => err.name === "TimeoutError",
    );
    assert.equal(sandbox.stats().faults.hang, 1);
    sandbox.setFaults({ hangRate: 0 });
    assert.equal((await call(sandbox, token, "GET", `${IDENTITIES}/${ids[0]}`)).status, 200);
  });

  it("commits an ambiguous create and delete but drops the connection before any answer", async () => {
    const id = ids[2]!;
    sandbox.setFaults({ ambiguousRate: 1 });
    await assert.rejects(
      call(sandbox, token, "POST", CONTROLS, {
        body: { identity_id: id, type: "SELL_ONLY", reason_code: "OTHER" },
      }),
      TypeError,
    );
    const [committed] = sandbox.controlsOf(id);
    assert.ok(committed, "the create was committed");
    assert.equal(committed.set_by, "SET_BY_CLIENT");

    await assert.rejects(
      call(sandbox, token, "DELETE", CONTROLS, { query: { control_id: committed.id } }),
      TypeError,
    );
    assert.deepEqual(sandbox.controlsOf(id), [], "the delete was committed");
    const stats = sandbox.stats();
    assert.equal(stats.faults.ambiguous, 2);
    assert.equal(stats.requests["POST /v2/identity/controls"]?.dropped, 1);

    // Reads are never ambiguous, and refused writes are answered.
    assert.equal(
      (await call(sandbox, token, "GET", CONTROLS, { query: { identity_id: id } })).status,
      200,
    );
    assertProblem(
      await call(sandbox, token, "DELETE", CONTROLS, { query: { control_id: committed.id } }),
      409,
    );
  });

  it("refuses every token after a revocation with 401, and a new token works", async () => {
    const old = await tokenFor(sandbox);
    sandbox.revokeTokens();
    assertProblem(await call(sandbox, old, "GET", IDENTITIES), 401, /revoked/);
    const fresh = await tokenFor(sandbox);
    assert.equal((await call(sandbox, fresh, "GET", IDENTITIES)).status, 200);
    token = fresh;
  });

  it("fails about the configured fraction of requests, counted in stats", async () => {
    sandbox.setFaults({ failRate: 0.3 });
    const before = sandbox.stats().faults.fail5xx;
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => call(sandbox, token, "GET", `${IDENTITIES}/${ids[3]}`)),
    );
    const failed = answers.filter((r) => r.status >= 500).length;
    assert.equal(failed + answers.filter((r) => r.status === 200).length, 200);
    assert.equal(sandbox.stats().faults.fail5xx - before, failed);
    assert.ok(failed > 30 && failed < 90, `${failed} of 200 failed at rate 0.3`);
  });

  it("never injects faults on the admin surface", async () => {
    sandbox.setFaults({ failRate: 1, hangRate: 0 });
    const res = await read(await fetch(`${sandbox.adminUrl}/stats`));
    assert.equal(res.status, 200);
    const id = ids[4]!;
    sandbox.setFaults({ ambiguousRate: 1, failRate: 0 });
    const add = await read(
      await fetch(`${sandbox.adminUrl}/identities/${id}/controls`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ type: "FROZEN", set_by: "SERVICE" }),
      }),
    );
    assert.equal(add.status, 200);
  });

  it("draws the same faults for the same seed and request order", async () => {
    const outcomes: number[][] = [];
    for (let run = 0; run < 2; run++) {
      const s = await startSandbox({
        identities: 5,
        failRate: 0.5,
        faultSeed: 42,
        rateLimitRps: 0,
        tokenRateLimitRps: 0,
      });
      try {
        s.setFaults({ failRate: 0 });
        const t = await tokenFor(s);
        s.setFaults({ failRate: 0.5 });
        const seq: number[] = [];
        for (let i = 0; i < 30; i++)
          seq.push((await call(s, t, "GET", IDENTITIES, { query: { limit: "1" } })).status);
        outcomes.push(seq);
      } finally {
        await s.close();
      }
    }
    assert.deepEqual(outcomes[0], outcomes[1]);
    assert.ok(outcomes[0]!.some((s) => s >= 500) && outcomes[0]!.some((s) => s === 200));
  });

  it("closes while a request is hanging, and that request ends with a network error", async () => {
    const s = await startSandbox({
      identities: 1,
      hangRate: 1,
      rateLimitRps: 0,
      tokenRateLimitRps: 0,
    });
    const pending = fetch(`${s.apiUrl}${IDENTITIES}`).catch((err: Error) => err);
    while (s.stats().faults.hang === 0) await new Promise((r) => setTimeout(r, 10));
    await s.close();
    const outcome = await pending;
    assert.ok(outcome instanceof Error, "the hanging request ends with a network error on close");
  });

  it("makes created controls visible through the API after faults are turned off", async () => {
    const c = await createControl(sandbox, token, ids[5]!);
    const list = await call(sandbox, token, "GET", CONTROLS, { query: { identity_id: ids[5]! } });
    assert.deepEqual(
      list.body.items.map((x: { id: string }) => x.id),
      [c.id],
    );
  });
});
