/**
 * Memory of a sandbox holding a million identities (half the flagged ones migrated), started as a
 * separate process (the CLI). Reads VmRSS/VmHWM from /proc and the process's own figures from the
 * admin stats, checks that a page is served, and prints one JSON line.
 *
 *   node --import tsx test/bench/sandbox-memory.ts [--identities 1000000]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { spawnSandbox } from "../helpers/sandbox-process.ts";

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
  const t0 = performance.now();
  const page = await fetch(`${info.api_url}/v2/identity/identities?limit=1000&order=DESC`, {
    headers: { authorization: `Bearer ${token.access_token}` },
  });
  const pageMs = performance.now() - t0;
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
    })}\n`,
  );
} finally {
  await proc.stop("SIGTERM");
}
