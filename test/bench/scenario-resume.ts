/**
 * Scenario d — the cost of a crash. `apply` of N creates (scenario b's sandbox and budget) is
 * SIGKILLed once the sandbox has counted N/2 creates; `apply --resume RUN_ID --yes` then finishes
 * it. Figures: the requests the resumed run made beyond the remaining work, as the sandbox counted
 * them ((POSTs + GETs) − remaining creates: the cost of settling what was in flight at the kill),
 * and redundant creates (sandbox creates beyond N, identities holding two client SELL_ONLY).
 * Duplicates or a wrong create total fail the scenario.
 */
import { applyClientArgs, applySandboxArgs } from "./scenario-apply.ts";
import {
  type BenchKit,
  expectExit,
  identitiesHolding,
  need,
  routeCount,
  runTool,
  sleep,
  startBenchSandbox,
  startTool,
  waitUntil,
} from "./scenario-kit.ts";
import { type BackendName, openTarget, seedTarget } from "./scenario-postgres.ts";

const SEED = 9;
const POST = "POST /v2/identity/controls";

async function resumeOnce(kit: BenchKit, backend: BackendName, creates: number) {
  const identities = identitiesHolding(creates, SEED);
  const sandbox = await startBenchSandbox(kit, applySandboxArgs(identities, SEED));
  const target = await openTarget(kit.cleanup, kit.postgres, backend);
  try {
    await seedTarget(kit, target, identities, SEED);
    const args = ["--yes", "--json", "--no-progress", ...applyClientArgs, ...target.args];
    const killAt = Math.ceil(creates / 2);
    kit.log(`apply of ${creates} creates on ${backend}, SIGKILL at ${killAt}...`);
    const first = startTool(kit, ["apply", ...args], sandbox.env, 10 * 60_000);
    let exited = false;
    void first.done.finally(() => {
      exited = true;
    });
    await waitUntil(
      async () => exited || (await sandbox.stats()).writes.creates >= killAt,
      `${killAt} creates`,
      10 * 60_000,
    );
    first.child.kill("SIGKILL");
    const killed = await first.done;
    if (killed.signal !== "SIGKILL") {
      throw new Error(
        `apply ended (${killed.code}) before it could be killed at ${killAt} creates`,
      );
    }
    const runId = /Run (\S+) \(apply\) started/.exec(killed.stderr)?.[1];
    if (!runId) throw new Error(`no run id in the killed apply's log:\n${killed.stderr}`);
    // Requests already received finish on the sandbox after the client is gone (20 ms latency).
    await sleep(1000);
    const atKill = await sandbox.stats();
    const remaining = creates - atKill.writes.creates;

    const resumed = await runTool(
      kit,
      ["apply", "--resume", runId, ...args],
      sandbox.env,
      10 * 60_000,
    );
    expectExit(resumed, [0], `apply --resume on ${backend}`);
    const after = await sandbox.stats();
    const diff = (route: string) => routeCount(after, route) - routeCount(atKill, route);
    const posts = diff(POST);
    const gets = Object.keys(after.requests)
      .filter((route) => route.startsWith("GET /v2/"))
      .reduce((n, route) => n + diff(route), 0);
    const duplicates = after.integrity.identitiesWithDuplicateClientSellOnly;
    const redundant = after.writes.creates - creates;
    const s = resumed.summary;
    const figures = {
      backend,
      creates,
      killed_at_creates: atKill.writes.creates,
      remaining_creates: remaining,
      resumed_posts: posts,
      resumed_gets: gets,
      overhead_requests: need(posts + gets - remaining, "overhead_requests"),
      run_outcomes_after_resume: s?.outcomes,
      resumed_tool_requests: s
        ? Object.fromEntries(
            Object.entries(s.requests).map(([k, v]) => [
              k,
              { count: v.count, retries: v.retries, rate_limited: v.rate_limited },
            ]),
          )
        : null,
      resumed_sandbox_429:
        Object.values(after.rateLimited).reduce((a, b) => a + b, 0) -
        Object.values(atKill.rateLimited).reduce((a, b) => a + b, 0),
      resumed_wall_s: Math.round(resumed.wallS * 10) / 10,
      creates_total: after.writes.creates,
      redundant_creates: redundant,
      duplicates,
    };
    kit.log(`  ${JSON.stringify(figures)}`);
    if (duplicates !== 0 || redundant !== 0) {
      throw new Error(
        `resume on ${backend} made redundant creates: ${JSON.stringify({ duplicates, redundant })}`,
      );
    }
    return figures;
  } finally {
    await target.drop();
    await sandbox.stop();
  }
}

/** Scenario d: its JSON figures. */
export async function resumeScenario(kit: BenchKit): Promise<Record<string, unknown>> {
  const creates = kit.quick ? 300 : 5000;
  const runs = [];
  for (const backend of kit.backends) runs.push(await resumeOnce(kit, backend, creates));
  return {
    setup: {
      sandbox: "as scenario b (20 ms latency, 200 rps over 1 s, 5 s penalty), separate process",
      client: applyClientArgs.join(" "),
      kill: "SIGKILL once the sandbox counts half the creates; then apply --resume RUN_ID --yes",
      overhead: "(resumed POSTs + GETs, counted by the sandbox) − remaining creates",
    },
    runs,
  };
}
