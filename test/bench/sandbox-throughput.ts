/**
 * Throughput of the sandbox started as a separate process (the CLI), limits and faults off, measured
 * with autocannon on loopback. Prints one JSON line with requests/s and latency per scenario.
 *
 *   node test/bench/sandbox-throughput.ts [--duration 5] [--connections 32]
 */
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { spawnSandbox } from "controls-sandbox/test-helpers";

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { average: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  headers: Record<string, string>;
}) => Promise<AutocannonResult>;

// autocannon ships no types; its promise API is small enough to describe here.
const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    connections: { type: "string", default: "32" },
    identities: { type: "string", default: "100000" },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);

const proc = await spawnSandbox(
  [
    "--port",
    "0",
    "--identities",
    values.identities,
    "--rate-limit",
    "0",
    "--token-rate-limit",
    "0",
  ],
  120_000,
);
try {
  const { info } = proc;
  const tokenRes = await fetch(info.token_url, {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: info.client_id,
      client_secret: info.client_secret,
    }),
  });
  const { access_token } = (await tokenRes.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${access_token}` };
  const page = (await (
    await fetch(`${info.api_url}/v2/identity/identities?limit=1000`, { headers })
  ).json()) as { items: { id: string; status_details: { active_controls: unknown[] } }[] };
  const withControls = page.items.find((i) => i.status_details.active_controls.length > 0);
  if (!withControls) throw new Error("no identity with controls to list");

  const scenarios: Record<string, string> = {
    controls_list: `${info.api_url}/v2/identity/controls?identity_id=${withControls.id}`,
    identity_get: `${info.api_url}/v2/identity/identities/${withControls.id}`,
    identities_page_10: `${info.api_url}/v2/identity/identities?limit=10`,
    identities_page_100: `${info.api_url}/v2/identity/identities?limit=100`,
    sell_only_page_100: `${info.api_url}/v2/identity/identities?control_types=SELL_ONLY&limit=100`,
  };
  const results: Record<string, unknown> = {};
  for (const [name, url] of Object.entries(scenarios)) {
    const r = await autocannon({ url, connections, duration, headers });
    results[name] = {
      rps: Math.round(r.requests.average),
      total: r.requests.total,
      latency_avg_ms: r.latency.average,
      latency_p99_ms: r.latency.p99,
      non2xx: r.non2xx,
      errors: r.errors + r.timeouts,
    };
  }
  process.stdout.write(
    `${JSON.stringify({
      bench: "sandbox-throughput",
      identities: Number(values.identities),
      connections,
      duration_s: duration,
      ...results,
    })}\n`,
  );
} finally {
  await proc.stop("SIGTERM");
}
