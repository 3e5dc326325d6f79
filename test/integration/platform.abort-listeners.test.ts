import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { after, before, describe, it } from "node:test";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { loadPlatformConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { createPlatformClient, READ_SCOPES } from "../../src/platform/index.ts";

const ROWS = [...syntheticIdentities(60, 5)];

describe("abort listeners of the platform client", () => {
  let sb: Sandbox;
  before(async () => {
    sb = await startSandbox({ rateLimitRps: 0, tokenRateLimitRps: 0 });
    sb.seedIdentities(ROWS, { migratedFraction: 0.5 });
  });
  after(() => sb.close());

  it("hundreds of queued per-identity reads sharing the run's signal print no MaxListenersExceededWarning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    const run = new AbortController();
    const config = loadPlatformConfig(
      { "api-url": sb.apiUrl, "token-url": sb.tokenUrl, "client-id": sb.credentials.clientId },
      { OAUTH_CLIENT_SECRET: sb.credentials.clientSecret },
    );
    const client = createPlatformClient(
      { ...config, rate: 10_000, concurrency: 4 },
      { scopes: READ_SCOPES, signal: run.signal },
    );
    try {
      // What a per-identity snapshot does: a page of reads at once, each passed the run's signal,
      // queued behind the client's concurrency limit.
      const reads = Array.from({ length: 400 }, (_, i) =>
        client.listIdentityControls(ROWS[i % ROWS.length]!.id, { signal: run.signal }),
      );
      // While they wait, the run's signal must not have collected a listener per request.
      await new Promise((r) => setImmediate(r));
      assert.ok(
        getEventListeners(run.signal, "abort").length <= 2,
        `listeners on the run's signal while 400 reads are queued: ${getEventListeners(run.signal, "abort").length}`,
      );
      await Promise.all(reads);
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(
        warnings.filter((w) => w.startsWith("MaxListenersExceededWarning")),
        [],
      );
    } finally {
      process.off("warning", onWarning);
      await client.close();
    }
  });

  it("aborting the run's signal after 5 of 100 reads were answered cancels every read not answered yet", async () => {
    const run = new AbortController();
    const config = loadPlatformConfig(
      { "api-url": sb.apiUrl, "token-url": sb.tokenUrl, "client-id": sb.credentials.clientId },
      { OAUTH_CLIENT_SECRET: sb.credentials.clientSecret },
    );
    const concurrency = 2;
    const client = createPlatformClient(
      { ...config, rate: 50, concurrency },
      { scopes: READ_SCOPES, signal: run.signal },
    );
    let answered = 0;
    let answeredAtAbort = 0;
    const reads = Array.from({ length: 100 }, (_, i) =>
      client.listIdentityControls(ROWS[i % ROWS.length]!.id, { signal: run.signal }).then((r) => {
        answered += 1;
        if (answered === 5) {
          answeredAtAbort = answered;
          run.abort(new Error("interrupted by test"));
        }
        return r;
      }),
    );
    const results = await Promise.allSettled(reads);
    await client.close();
    const fulfilled = results.filter((r) => r.status === "fulfilled").length;
    const cancelled = results.filter(
      (r) => r.status === "rejected" && (r.reason as { kind?: string }).kind === "cancelled",
    ).length;
    assert.equal(answeredAtAbort, 5);
    // At most the reads already on the wire (the concurrency) may still be answered.
    assert.ok(fulfilled >= 5 && fulfilled <= 5 + concurrency, `${fulfilled} reads answered`);
    assert.equal(cancelled, 100 - fulfilled, "every other read is rejected as cancelled");
  });
});
