import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SandboxUsageError, sandboxOptionsFromArgv } from "../../src/cli/options.ts";
import type { Sandbox } from "../../src/index.ts";
import { adminOk, get, quoteExecutionsPath } from "../helpers/sandbox-api.ts";
import { assertProblem, read } from "../helpers/sandbox-http.ts";
import { spawnSandbox } from "../helpers/sandbox-process.ts";

describe("controls-sandbox --endpoint-rate-limit", () => {
  it("maps each PATH=RPS onto the override table, keyed by route template", () => {
    const o = sandboxOptionsFromArgv({
      "endpoint-rate-limit": ["/v2/profiles/*/quote-executions=2", "/v2/transfer/internal=0.5"],
    });
    assert.deepEqual(o.endpointRateLimits, {
      "/v2/profiles/:profile_id/quote-executions": 2,
      "/v2/transfer/internal": 0.5,
    });
    assert.equal("endpointRateLimits" in sandboxOptionsFromArgv({}), false, "absent unless given");
  });

  it("refuses a malformed entry, a negative rate and an unknown path with an error naming the flag", () => {
    for (const entry of [
      "/v2/transfer/internal",
      "/v2/transfer/internal=",
      "=3",
      "/v2/transfer/internal=-1",
      "/v2/transfer/internal=fast",
    ]) {
      assert.throws(
        () => sandboxOptionsFromArgv({ "endpoint-rate-limit": [entry] }),
        (err: unknown) =>
          err instanceof SandboxUsageError &&
          /--endpoint-rate-limit takes PATH=RPS/.test(err.message),
        entry,
      );
    }
    assert.throws(
      () => sandboxOptionsFromArgv({ "endpoint-rate-limit": ["/v2/elsewhere=1"] }),
      (err: unknown) =>
        err instanceof SandboxUsageError &&
        /--endpoint-rate-limit: unknown endpoint "\/v2\/elsewhere"/.test(err.message),
    );
  });

  it("limits one endpoint of a CLI-started sandbox to its overridden rate", async () => {
    const proc = await spawnSandbox([
      "--port",
      "0",
      "--token-rate-limit",
      "0",
      "--rate-window-s",
      "10",
      "--endpoint-rate-limit",
      "/v2/profiles/{profile_id}/quote-executions=0.1",
    ]);
    try {
      // The helpers only read the URLs of the sandbox they talk to.
      const sandbox = {
        apiUrl: proc.info.api_url,
        adminUrl: proc.info.admin_url,
      } as unknown as Sandbox;
      await adminOk(sandbox, "POST", "/quote-executions", { profile_id: "cli-p", count: 3 });
      const tokenRes = await read(
        await fetch(proc.info.token_url, {
          method: "POST",
          body: new URLSearchParams({
            grant_type: "client_credentials",
            client_id: proc.info.client_id,
            client_secret: proc.info.client_secret,
          }),
        }),
      );
      const token = tokenRes.body.access_token as string;
      assert.equal((await get(sandbox, token, quoteExecutionsPath("cli-p"))).status, 200);
      assertProblem(
        await get(sandbox, token, quoteExecutionsPath("cli-p")),
        429,
        /over 0\.1 requests\/s/,
      );
    } finally {
      assert.equal(await proc.stop("SIGTERM"), 0);
    }
  });
});
