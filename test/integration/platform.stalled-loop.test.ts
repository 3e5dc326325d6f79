import assert from "node:assert/strict";
import diagnostics_channel from "node:diagnostics_channel";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { type SandboxProcess, spawnSandbox } from "controls-sandbox/test-helpers";
import { loadPlatformConfig, type PlatformConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { createPlatformClient, READ_SCOPES } from "../../src/platform/index.ts";

const RATE = 50;
const WAVES = 3;
const PER_WAVE = 75;
const REQUESTS = WAVES * PER_WAVE;
const STALL_MS = 500;
const ENDPOINT = "/v2/identity/controls";
const IDS = [...syntheticIdentities(REQUESTS, 5)].map((r) => r.id);

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // The event loop is blocked: no timer, no socket, nothing else runs.
  }
}

/**
 * A request's send is timed when undici writes its headers to the socket, in this process, by
 * the clock the budget keeps (`Date.now`). The sandbox's log, on the other side, times the
 * handler, which on a loaded machine runs some milliseconds after the request arrived, by a
 * delay that differs from request to request: counted there, a window of a correct client could
 * hold 52. A window here is one second less EDGE_MS, the whole milliseconds at its edges. A client
 * that dated its requests at their grant, not their send, put 51 into one (measured).
 */
const EDGE_MS = 2;

/** The most sends in any window of one second less its edges. */
function busiestSecond(sentAt: readonly number[]): number {
  const times = [...sentAt].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < times.length; last++) {
    while ((times[last] as number) - (times[first] as number) > 1000 - EDGE_MS) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

describe("the rate budget when the event loop stalls", () => {
  let sb: SandboxProcess;

  before(async () => {
    // Out of process, so the sandbox's clock and request log run on while this process is blocked.
    // Its own limit is off: the test counts what arrives instead of waiting for 429s.
    sb = await spawnSandbox(["--port", "0", "--identities", String(REQUESTS), "--seed", "5"]);
  });
  after(async () => {
    await sb.stop();
  });

  it("sends no more than the budget in any one-second window after a 500 ms blocked event loop", async () => {
    const config: PlatformConfig = {
      ...loadPlatformConfig(
        {
          "api-url": sb.info.api_url,
          "token-url": sb.info.token_url,
          "client-id": sb.info.client_id,
        },
        { OAUTH_CLIENT_SECRET: sb.info.client_secret },
      ),
      rate: RATE,
      concurrency: 16,
    };
    const client = createPlatformClient(config, { scopes: READ_SCOPES });
    // The stall sits between grants and their sends: undici announces each request synchronously
    // before it writes it. Each wave starts after an idle spell, so the budget grants its burst
    // at once, and the first request of the wave blocks the loop for half a second with the rest
    // of that burst granted and still unsent.
    let stallNext = false;
    let created = 0;
    const onCreate = (m: unknown) => {
      const path = (m as { request: { path: string } }).request.path;
      if (!path.startsWith(ENDPOINT)) return;
      created += 1;
      if (stallNext) {
        stallNext = false;
        busyWait(STALL_MS);
      }
    };
    const sentAt: number[] = [];
    const onSend = (m: unknown) => {
      const path = (m as { request: { path: string } }).request.path;
      if (path.startsWith(ENDPOINT)) sentAt.push(Date.now());
    };
    diagnostics_channel.subscribe("undici:request:create", onCreate);
    diagnostics_channel.subscribe("undici:client:sendHeaders", onSend);
    try {
      await client.getIdentity(IDS[0] as string); // the token first, out of the way
      for (let w = 0; w < WAVES; w++) {
        await delay(1200);
        stallNext = true;
        const wave = IDS.slice(w * PER_WAVE, (w + 1) * PER_WAVE);
        await Promise.all(wave.map((id) => client.listIdentityControls(id)));
      }
    } finally {
      diagnostics_channel.unsubscribe("undici:request:create", onCreate);
      diagnostics_channel.unsubscribe("undici:client:sendHeaders", onSend);
      await client.close();
    }
    assert.ok(created >= REQUESTS, `${created} requests`);
    assert.equal(sentAt.length, created, "every request created was sent");
    const served = (await (
      await fetch(`${sb.info.admin_url}/requests?from=0&to=${Date.now()}&endpoint=${ENDPOINT}`)
    ).json()) as { served: number };
    assert.equal(served.served, created, "the sandbox served every request sent");
    const most = busiestSecond(sentAt);
    assert.ok(most <= RATE, `${most} requests sent in one second (budget ${RATE})`);
  });
});
