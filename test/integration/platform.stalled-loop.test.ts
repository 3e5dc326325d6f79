import assert from "node:assert/strict";
import diagnostics_channel from "node:diagnostics_channel";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { type SandboxProcess, spawnSandbox } from "controls-sandbox/test-helpers";
import { loadPlatformConfig, type PlatformConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { createPlatformClient, READ_SCOPES } from "../../src/platform/index.ts";
import { SANDBOX_CONDITION } from "../helpers/cli-entry.ts";

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
 * The sandbox logs a request when its handler runs, which on a busy machine can be some
 * milliseconds after it arrived: a one-second window of the client can show as 1000 ms plus that
 * jitter in the log. Windows of 1000 − JITTER_MS in the log are inside one second of real time.
 */
const JITTER_MS = 50;

/** The most requests the sandbox logged in any window of one second less the jitter, stepping 5 ms. */
async function busiestSecond(sb: SandboxProcess, from: number, to: number): Promise<number> {
  let most = 0;
  for (let start = from - 1000; start <= to; start += 5) {
    const end = start + 1000 - JITTER_MS - 1;
    const url = `${sb.info.admin_url}/requests?from=${start}&to=${end}&endpoint=${ENDPOINT}`;
    const w = (await (await fetch(url)).json()) as { served: number; rateLimited: number };
    most = Math.max(most, w.served + w.rateLimited);
  }
  return most;
}

describe("the rate budget when the event loop stalls", () => {
  let sb: SandboxProcess;

  before(async () => {
    // Out of process, so the sandbox's clock and request log run on while this process is blocked.
    // Its own limit is off: the test counts what arrives instead of waiting for 429s.
    sb = await spawnSandbox(
      ["--port", "0", "--identities", String(REQUESTS), "--seed", "5"],
      undefined,
      SANDBOX_CONDITION,
    );
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
    diagnostics_channel.subscribe("undici:request:create", onCreate);
    const from = Date.now();
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
      await client.close();
    }
    const to = Date.now();
    assert.ok(created >= REQUESTS, `${created} requests`);
    const most = await busiestSecond(sb, from, to);
    assert.ok(most <= RATE, `${most} requests reached the sandbox in one second (budget ${RATE})`);
  });
});
