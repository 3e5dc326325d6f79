/**
 * Memory of a sandbox holding a million identities (half the flagged ones migrated), started as a
 * separate process (the CLI). Reads VmRSS/VmHWM from /proc and the process's own figures from the
 * admin stats, checks that a page is served, and prints one JSON line.
 *
 *   node test/bench/sandbox-memory.ts [--identities 1000000]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { spawnSandbox } from "controls-sandbox/test-helpers";

const { values } = parseArgs({
  options: {
    identities: { type: "string", default: "1000000" },
    "drift-fraction": { type: "string", default: "0" },
  },
});

function procStatusKb(pid: number, field: string): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(
      readFileSync(`/proc/${pid}/status`, "utf8"),
    );
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined; // not Linux
  }
}

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
const started = performance.now();
const proc = await spawnSandbox(
  [
    "--port",
    "0",
    "--identities",
    values.identities,
    "--migrated-fraction",
    "0.5",
    "--drift-fraction",
    values["drift-fraction"],
    "--rate-limit",
    "0",
    "--token-rate-limit",
    "0",
  ],
  300_000,
);
try {
  const readyS = (performance.now() - started) / 1000;
  const { info } = proc;
  const stats = (await (await fetch(`${info.admin_url}/stats`)).json()) as {
    identities: number;
    controls: { total: number; active: number };
    memory: { rssBytes: number; heapUsedBytes: number };
  };
  const token = (await (
    await fetch(info.token_url, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: info.client_id,
        client_secret: info.client_secret,
      }),
    })
  ).json()) as { access_token: string };
  const headers = { authorization: `Bearer ${token.access_token}` };
  const t0 = performance.now();
  const page = await fetch(`${info.api_url}/v2/identity/identities?limit=1000&order=DESC`, {
    headers,
  });
  const pageMs = performance.now() - t0;
  // The filtered listing walks the index of identities holding a SELL_ONLY, never all of them:
  // its pages cost what an unfiltered page costs, however many identities the sandbox holds.
  const t1 = performance.now();
  let sellOnlyPages = 0;
  let sellOnlyIdentities = 0;
  let cursor = "";
  do {
    const url = new URL(`${info.api_url}/v2/identity/identities`);
    url.search = new URLSearchParams({ control_types: "SELL_ONLY", limit: "1000" }).toString();
    if (cursor) url.searchParams.set("page_cursor", cursor);
    const res = (await (await fetch(url, { headers })).json()) as {
      items: unknown[];
      next_page_cursor: string;
    };
    sellOnlyPages++;
    sellOnlyIdentities += res.items.length;
    cursor = res.next_page_cursor;
  } while (cursor !== "");
  const sellOnlyMs = performance.now() - t1;
  const pid = proc.child.pid ?? 0;
  const rssKb = procStatusKb(pid, "VmRSS");
  const hwmKb = procStatusKb(pid, "VmHWM");
  process.stdout.write(
    `${JSON.stringify({
      bench: "sandbox-memory",
      identities: stats.identities,
      controls: stats.controls.total,
      ready_s: Math.round(readyS * 10) / 10,
      rss_mb: rssKb === undefined ? mb(stats.memory.rssBytes) : Math.round(rssKb / 1024),
      peak_rss_mb: hwmKb === undefined ? null : Math.round(hwmKb / 1024),
      heap_used_mb: mb(stats.memory.heapUsedBytes),
      page_1000_status: page.status,
      page_1000_ms: Math.round(pageMs),
      sell_only_identities: sellOnlyIdentities,
      sell_only_pages: sellOnlyPages,
      sell_only_ms_per_page: Math.round((sellOnlyMs / sellOnlyPages) * 10) / 10,
    })}\n`,
  );
} finally {
  await proc.stop("SIGTERM");
}
