import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { loadPlatformConfig, type PlatformConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import {
  createPlatformClient,
  PlatformError,
  READ_SCOPES,
  WRITE_SCOPES,
} from "../../src/platform/index.ts";

// Flags all false: the sandbox migrates nothing, so any SELL_ONLY present was created here.
const ROWS = [...syntheticIdentities(80, 11)].map((r) => ({
  id: r.id,
  user_disabled: false,
  admin_disabled: false,
}));
const IDS = ROWS.map((r) => r.id);

function configFor(sb: Sandbox, over: Partial<PlatformConfig> = {}): PlatformConfig {
  const base = loadPlatformConfig(
    { "api-url": sb.apiUrl, "token-url": sb.tokenUrl, "client-id": sb.credentials.clientId },
    { OAUTH_CLIENT_SECRET: sb.credentials.clientSecret },
  );
  return { ...base, rate: 10_000, concurrency: 8, retryBaseMs: 2, retryCapMs: 20, ...over };
}

const posts = (sb: Sandbox) =>
  Object.values(sb.stats().requests["POST /v2/identity/controls"] ?? {}).reduce((a, b) => a + b, 0);

describe("retries and ambiguous writes against an unreliable sandbox", () => {
  let sb: Sandbox;

  before(async () => {
    sb = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
  });
  after(async () => {
    await sb.close();
  });
  beforeEach(() => {
    sb.reset();
    sb.setFaults({ failRate: 0, hangRate: 0, ambiguousRate: 0 });
    sb.seedIdentities(ROWS, { migratedFraction: 0 });
  });

  it("with 20% of answers 5xx, every read eventually succeeds", async () => {
    // Token first: the token endpoint gets faults too, and this test is about the API reads.
    const client = createPlatformClient(configFor(sb, { maxAttempts: 10 }), {
      scopes: READ_SCOPES,
    });
    await client.getIdentity(IDS[0] as string);
    sb.setFaults({ failRate: 0.2 });
    const reads: Promise<unknown>[] = [];
    for (let i = 0; i < 150; i++) {
      const id = IDS[i % IDS.length] as string;
      reads.push(i % 2 ? client.getIdentity(id) : client.listIdentityControls(id));
    }
    reads.push(
      (async () => {
        let n = 0;
        for await (const page of client.listIdentities({ limit: 7 })) n += page.length;
        return n;
      })(),
    );
    const results = await Promise.allSettled(reads);
    assert.deepEqual(
      results.filter((r) => r.status === "rejected"),
      [],
    );
    assert.equal((results.at(-1) as PromiseFulfilledResult<number>).value, IDS.length);
    const injected = sb.stats().faults.fail5xx;
    const m = client.metrics();
    const retries = Object.values(m.endpoints).reduce((a, e) => a + e.retries, 0);
    assert.ok(injected > 10, `faults injected: ${injected}`);
    assert.equal(retries, injected, "each injected 5xx was retried once");
    await client.close();
  });

  it("gives up on a hanging read after --timeout-ms and retries it", async () => {
    const client = createPlatformClient(configFor(sb, { timeoutMs: 1_000, maxAttempts: 10 }), {
      scopes: READ_SCOPES,
    });
    await client.getIdentity(IDS[0] as string);
    // The sandbox hangs the next request only: once it is seen hanging, answers come again.
    sb.setFaults({ hangRate: 1 });
    const read = client.getIdentity(IDS[1] as string);
    while (sb.stats().faults.hang === 0) await new Promise((r) => setTimeout(r, 5));
    sb.setFaults({ hangRate: 0 });
    assert.equal((await read).id, IDS[1]);
    assert.equal(sb.stats().faults.hang, 1, "exactly one request hung");
    const ep = client.metrics().endpoints["GET /v2/identity/identities/{id}"];
    // The hung request timed out; on a loaded machine a slow answer may time out as well.
    assert.ok((ep?.errors.timeout ?? 0) >= 1, `timeouts: ${ep?.errors.timeout}`);
    await client.close();
  });

  it("returns every create whose answer was lost as ambiguous, never re-sends it, and leaves no duplicate", async () => {
    const client = createPlatformClient(configFor(sb, { maxAttempts: 10 }), {
      scopes: WRITE_SCOPES,
    });
    await client.getIdentity(IDS[0] as string);
    sb.setFaults({ ambiguousRate: 0.25, failRate: 0.1 });
    const targets = IDS.slice(0, 60);
    const results = await Promise.allSettled(
      targets.map((identityId) =>
        client.createIdentityControl({
          identityId,
          type: "SELL_ONLY",
          reasonCode: "OTHER",
          reason: "legacy user_disabled",
        }),
      ),
    );
    const failed = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
    const stats = sb.stats();
    assert.ok(stats.faults.ambiguous > 0 && stats.faults.fail5xx > 0, JSON.stringify(stats.faults));
    assert.equal(failed.length, stats.faults.ambiguous + stats.faults.fail5xx);
    for (const f of failed) {
      assert.ok(f.reason instanceof PlatformError);
      assert.equal(f.reason.classification, "ambiguous", f.reason.message);
      assert.equal(f.reason.attempts, 1);
    }
    assert.equal(posts(sb), targets.length, "exactly one POST per create");
    assert.equal(stats.integrity.identitiesWithDuplicateClientSellOnly, 0);
    // Dropped connections had committed; injected 5xx had not. The caller must look to know.
    assert.equal(stats.writes.creates, targets.length - stats.faults.fail5xx);
    assert.equal(
      client.metrics().endpoints["POST /v2/identity/controls"]?.ambiguous,
      failed.length,
    );
    await client.close();
  });

  it("repeats a delete whose answer was lost and reports the control as already deleted", async () => {
    const client = createPlatformClient(configFor(sb, { maxAttempts: 10 }), {
      scopes: WRITE_SCOPES,
    });
    const created = await Promise.all(
      IDS.slice(0, 40).map((identityId) =>
        client.createIdentityControl({ identityId, type: "SELL_ONLY", reasonCode: "OTHER" }),
      ),
    );
    sb.setFaults({ ambiguousRate: 0.3 });
    const outcomes = await Promise.all(
      created.map((c) => client.deleteIdentityControl(c.id, "flag cleared")),
    );
    const dropped = sb.stats().faults.ambiguous;
    assert.ok(dropped > 0);
    assert.equal(outcomes.filter((o) => o.alreadyDeleted).length, dropped);
    for (const id of IDS.slice(0, 40)) assert.deepEqual(sb.controlsOf(id), []);
    await client.close();
  });

  it("ends a delete that never gets a clear answer as ambiguous after --max-attempts tries", async () => {
    const client = createPlatformClient(configFor(sb, { maxAttempts: 3 }), {
      scopes: WRITE_SCOPES,
    });
    const c = await client.createIdentityControl({
      identityId: IDS[70] as string,
      type: "SELL_ONLY",
      reasonCode: "OTHER",
    });
    sb.setFaults({ failRate: 1 });
    await assert.rejects(client.deleteIdentityControl(c.id), (err: unknown) => {
      assert.ok(err instanceof PlatformError);
      assert.deepEqual(
        [err.kind, err.classification, err.attempts, err.afterAmbiguousAttempt],
        ["server", "ambiguous", 3, true],
      );
      return true;
    });
    await client.close();
  });

  it("reports a first-attempt 404 on delete as not_found, not as done", async () => {
    const client = createPlatformClient(configFor(sb), { scopes: WRITE_SCOPES });
    await assert.rejects(
      client.deleteIdentityControl("no-such-control"),
      (err: unknown) => err instanceof PlatformError && err.kind === "not_found",
    );
    await client.close();
  });

  it("cancels queued and in-flight requests when the run's signal aborts after the first answer, rather than draining the queue", async () => {
    const ac = new AbortController();
    const client = createPlatformClient(configFor(sb, { rate: 2, timeoutMs: 60_000 }), {
      scopes: READ_SCOPES,
      signal: ac.signal,
    });
    // At 2 rps the 20 reads would take 10 s to drain: abort on the first answer instead.
    const reads = IDS.slice(0, 20).map((id) =>
      client.getIdentity(id).finally(() => ac.abort(new Error("SIGINT"))),
    );
    const results = await Promise.allSettled(reads);
    const rejected = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
    // The first answer, and at most one more already on the wire at 2 rps.
    assert.ok(rejected.length >= 18, `${20 - rejected.length} of 20 reads were answered`);
    for (const r of rejected) {
      assert.ok(r.reason instanceof PlatformError);
      assert.equal(r.reason.kind, "cancelled");
    }
    await client.close();
  });
});
