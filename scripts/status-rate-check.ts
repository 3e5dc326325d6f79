/**
 * `node scripts/status-rate-check.ts [--creates 20000] [--rate 150] [--every-s 2]`: issue 54's
 * acceptance figure, measured. A sandbox (in this process, 5 ms per answer, its limit above
 * `--rate`) holding at least `--creates` user_disabled identities, none migrated; the same
 * identities seeded in a fresh PGlite data folder; then `apply --yes` at `--rate` (exactly
 * `--creates` creates). Meanwhile, every `--every-s`, `status --json` from a second process: the
 * stage it names, and while it writes its rate beside the rate the sandbox served creates at
 * over the same 10 s (the 10 s before the status file was written, once 10 s of writing are
 * behind); and `runs --json` every fifth sample, the running apply's findings. Prints each pair,
 * the greatest deviation, the stages in the order seen and the load average before and after.
 * Exits 1 when a status rate is more than 10% off the sandbox's, or a stage or the findings were
 * never seen. A repository script (docs/operating.md, "Watching a run's figures"), not a test.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startSandbox } from "controls-sandbox";
import { syntheticIdentities } from "../src/contract/index.ts";
import { localChannelPaths } from "../src/migration/steer/local-channel.ts";
import { CLI_ENTRY } from "../test/helpers/cli-entry.ts";

const SEED = 7;
const CONTROLS = "/v2/identity/controls";
const WINDOW_MS = 10_000;
const TOLERANCE = 0.1;

const { values } = parseArgs({
  options: {
    creates: { type: "string", default: "20000" },
    rate: { type: "string", default: "150" },
    "every-s": { type: "string", default: "2" },
  },
});
const creates = Number(values.creates);
const rate = Number(values.rate);
const everyMs = Number(values["every-s"]) * 1000;

/** How many synthetic identities hold `n` user_disabled ones (the source seeded with as many). */
function identitiesHolding(n: number): number {
  let seen = 0;
  let found = 0;
  for (const row of syntheticIdentities(Number.MAX_SAFE_INTEGER, SEED)) {
    seen += 1;
    if (row.user_disabled && ++found >= n) break;
  }
  return seen;
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

/** The CLI in a child process; its stdout, once it exits 0 (else throws with its stderr). */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI_ENTRY, ...args], { env });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${args[0]} exit ${code}: ${err}`)),
    );
  });
}

interface Pair {
  at: string;
  done: number;
  status: number;
  sandbox: number;
  deviation: number;
}

const identities = identitiesHolding(creates);
const home = mkdtempSync(join(tmpdir(), "cm-status-rate-"));
const sandbox = await startSandbox({
  identities,
  seed: SEED,
  migratedFraction: 0,
  latencyMs: 5,
  rateLimitRps: Math.max(rate * 2, 200),
  rateWindowS: 1,
});
const env: NodeJS.ProcessEnv = {
  ...process.env,
  CONTROLS_DATA_DIR: join(home, "data"),
  CONTROLS_PROGRESS: "false",
  API_BASE_URL: sandbox.apiUrl,
  OAUTH_TOKEN_URL: sandbox.tokenUrl,
  OAUTH_CLIENT_ID: sandbox.credentials.clientId,
  OAUTH_CLIENT_SECRET: sandbox.credentials.clientSecret,
};
const failures: string[] = [];
try {
  console.log(`load average before: ${load()} (${spawnSync("uptime").stdout})`.trim());
  console.log(`sandbox: ${identities} identities, ${creates} user_disabled, none migrated`);
  await cli(["db", "seed", "--identities", String(identities), "--seed", String(SEED)], env);
  const startedAt = Date.now();
  const apply = spawn(
    process.execPath,
    [
      ...CLI_ENTRY,
      "apply",
      "--yes",
      "--json",
      "--no-wait-for-platform",
      "--rate",
      String(rate),
      "--allow-rate-above-limit",
      "--out",
      join(home, "reports"),
    ],
    { env, stdio: ["ignore", "pipe", "inherit"] },
  );
  let applyOut = "";
  apply.stdout.on("data", (d) => {
    applyOut += d;
  });
  let exit: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    apply.on("exit", (code) => {
      exit = code;
      resolve();
    }),
  );
  // The first status once the apply holds the data folder (its status file is there): a status
  // that opened the folder first would have the apply refused.
  const { statusFile } = localChannelPaths(join(home, "data"));
  while (exit === undefined && !existsSync(statusFile)) await new Promise((r) => setTimeout(r, 50));
  const stages: string[] = [];
  const pairs: Pair[] = [];
  let writingSeenAt: number | undefined;
  let findingsSeen = false;
  for (let sample = 0; exit === undefined; sample++) {
    const next = Date.now() + everyMs;
    const reads = await Promise.all([
      cli(["status", "--json"], env).catch((e: Error) => e),
      sample % 5 === 0 ? cli(["runs", "--json"], env).catch((e: Error) => e) : undefined,
    ]);
    const [statusOut, runsOut] = reads;
    if (typeof statusOut === "string") {
      const s = JSON.parse(statusOut);
      const stage = s.status === "running" ? String(s.stage) : s.status;
      if (stages.at(-1) !== stage) stages.push(stage);
      const at = Date.parse(s.written_at ?? s.reported_at ?? new Date().toISOString());
      const left = s.actions.pending + s.actions.in_flight;
      if (stage === "writing") writingSeenAt ??= at;
      // A full 10 s window of writing, ending while the run still writes.
      if (stage === "writing" && writingSeenAt !== undefined && at - writingSeenAt >= WINDOW_MS) {
        if (left > 0) {
          const served = sandbox.requestsIn({ from: at - WINDOW_MS, to: at, endpoint: CONTROLS });
          const measured = served.served / (WINDOW_MS / 1000);
          const deviation = Math.abs(s.rate_per_s - measured) / measured;
          pairs.push({
            at: new Date(at).toISOString().slice(11, 19),
            done: s.actions.done,
            status: s.rate_per_s,
            sandbox: measured,
            deviation,
          });
          console.log(
            `${pairs.at(-1)?.at} done ${s.actions.done}/${s.actions.total}: status ${s.rate_per_s}/s, sandbox ${measured.toFixed(1)}/s, deviation ${(100 * deviation).toFixed(1)}%`,
          );
        }
      } else console.log(`status: ${stage}, actions ${s.actions.done}/${s.actions.total}`);
    } else if (exit === undefined) console.log(`status failed: ${statusOut.message}`);
    if (typeof runsOut === "string") {
      const running = runsOut
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .find((r) => r.mode === "apply" && r.status === "running");
      if (running) {
        const findings = Object.entries(running.counts ?? {}).filter(
          ([k]) => !/^(pending|in_flight|succeeded|failed|ambiguous|skipped)(:|$)/.test(k),
        );
        findingsSeen ||= findings.length > 0;
        console.log(
          `runs: ${running.id} running, findings ${JSON.stringify(running.findings ?? Object.fromEntries(findings))}`,
        );
      }
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())))]);
  }
  await exited;
  // The run's final word, as status tells it once the run is over.
  const final = JSON.parse(await cli(["status", "--json"], env));
  if (stages.at(-1) !== final.status) stages.push(final.status);
  const summary = JSON.parse(applyOut.trim().split("\n").at(-1) ?? "{}");
  const created = summary.outcomes?.["succeeded:created"];
  console.log(
    `apply exit ${exit} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s, ${created} created`,
  );
  console.log(`stages seen: ${stages.join(" → ")}`);
  const worst = pairs.reduce((m, p) => Math.max(m, p.deviation), 0);
  console.log(`pairs: ${pairs.length}, greatest deviation ${(100 * worst).toFixed(1)}%`);
  console.log(`load average after: ${load()}`);
  if (exit !== 0) failures.push(`apply exited ${exit}`);
  if (created !== creates) failures.push(`apply created ${created}, expected ${creates}`);
  if (pairs.length === 0) failures.push("no full 10 s window of writing was sampled");
  if (worst > TOLERANCE) failures.push(`status is ${(100 * worst).toFixed(1)}% off the sandbox`);
  for (const stage of ["writing", "completed"]) {
    if (!stages.includes(stage)) failures.push(`status never showed ${stage}`);
  }
  if (!findingsSeen) failures.push("runs never showed the running apply's findings");
} finally {
  await sandbox.close();
  rmSync(home, { recursive: true, force: true });
}
for (const f of failures) console.error(`FAIL: ${f}`);
process.exitCode = failures.length > 0 ? 1 : 0;
