import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { type Sandbox, startSandbox } from "controls-sandbox";
import { loadPlatformConfig, type PlatformConfig } from "../../src/config.ts";
import { syntheticIdentities } from "../../src/contract/index.ts";
import { createLogger } from "../../src/log.ts";
import { createPlatformClient, READ_SCOPES } from "../../src/platform/index.ts";

const IDS = [...syntheticIdentities(20, 3)].map((r) => r.id);

function configFor(sb: Sandbox, over: Partial<PlatformConfig>): PlatformConfig {
  const base = loadPlatformConfig(
    { "api-url": sb.apiUrl, "token-url": sb.tokenUrl, "client-id": sb.credentials.clientId },
    { OAUTH_CLIENT_SECRET: sb.credentials.clientSecret },
  );
  return { ...base, ...over };
}

describe("rate budget against the sandbox's limits", () => {
  let sb: Sandbox;

  before(async () => {
    // 5 rps over a 1 s window, 2 s penalty: small enough to trip on purpose and wait out.
    sb = await startSandbox({
      identities: 20,
      seed: 3,
      rateLimitRps: 5,
      rateWindowS: 1,
      penaltyS: 2,
    });
  });
  after(async () => {
    await sb.close();
  });

  it("after a 429 sends nothing to that endpoint until Retry-After, while other endpoints go on", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "info", write: (l) => lines.push(l) });
    // The client's own budget (8 rps) is above the sandbox's 5 rps, so it will be refused once.
    // Its --penalty-s is 300: only the server's Retry-After (2 s) can explain a short pause.
    const client = createPlatformClient(configFor(sb, { rate: 8, concurrency: 8, penaltyS: 300 }), {
      scopes: READ_SCOPES,
      logger,
    });
    await client.getIdentity(IDS[0] as string); // token first, so its request is out of the way
    const controls = Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        client.listIdentityControls(IDS[i % IDS.length] as string),
      ),
    );
    // A gentle stream (about 3 rps) on another endpoint for the whole run.
    let stop = false;
    const others = (async () => {
      let n = 0;
      while (!stop) {
        await client.getIdentity(IDS[n++ % IDS.length] as string);
        await delay(300);
      }
      return n;
    })();
    const lists = await controls;
    stop = true;
    const otherCount = await others;

    assert.equal(lists.length, 16, "every queued request eventually succeeded");
    const warnings = lines.filter((l) => / WARN /.test(l));
    assert.equal(warnings.length, 1, warnings.join("\n"));
    const warning = warnings[0] as string;
    assert.match(warning, /\/v2\/identity\/controls/);
    const seenAt = Date.parse(warning.slice(0, 24));
    const resumeAt = Date.parse(/"resume_at":"([^"]+)"/.exec(warning)?.[1] ?? "");
    assert.ok(
      resumeAt - seenAt >= 1500 && resumeAt - seenAt <= 2100,
      `pause ${resumeAt - seenAt} ms`,
    );
    assert.ok(
      warning.includes(new Date(resumeAt).toISOString()),
      "the warning names the resume time",
    );

    // In-flight requests sent before the 429 arrived may land a few ms later; after that, silence.
    const during = sb.requestsIn({
      from: seenAt + 50,
      to: resumeAt - 20,
      endpoint: "/v2/identity/controls",
    });
    assert.deepEqual(during, { served: 0, rateLimited: 0, refusedByPenalty: 0 });
    const otherDuring = sb.requestsIn({
      from: seenAt + 50,
      to: resumeAt - 20,
      endpoint: "/v2/identity/identities/:id",
    });
    assert.ok(otherDuring.served >= 2, `the other endpoint kept going (${otherDuring.served})`);
    assert.ok(otherCount > 0);

    const m = client.metrics();
    const ep = m.endpoints["GET /v2/identity/controls"];
    assert.ok((ep?.rateLimited ?? 0) >= 1);
    assert.equal(m.budgets["/v2/identity/controls"]?.rate, 4, "the budget was halved");
    assert.equal(m.budgets["/v2/identity/controls"]?.penalties, 1);
    assert.equal(m.budgets["/v2/identity/identities/{id}"]?.penalties, 0);
    assert.equal(sb.stats().rateLimited["/v2/identity/identities/:id"] ?? 0, 0);
    await client.close();
  });
});
