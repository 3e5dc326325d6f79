/**
 * The naive ways to do scenario b's job, for comparison with the tool: raw fetch, no budget, no
 * journal. Each create targets a fresh user_disabled identity, so every one is legitimate.
 */
import type { SandboxStats } from "controls-sandbox";
import { type BenchSandbox, rawToken, round, sleep } from "./scenario-kit.ts";

const CONTROLS = "/v2/identity/controls";

async function createRaw(
  sandbox: BenchSandbox,
  token: string,
  identityId: string,
): Promise<string> {
  try {
    const res = await fetch(`${sandbox.info.api_url}${CONTROLS}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        identity_id: identityId,
        type: "SELL_ONLY",
        reason_code: "OTHER",
        reason: "bench baseline",
      }),
    });
    await res.arrayBuffer();
    return String(res.status);
  } catch (err) {
    return `error ${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name}`;
  }
}

function tally(statuses: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

const limited = (s: SandboxStats) => s.rateLimited[CONTROLS] ?? 0;

/**
 * Baseline 1: one create at a time, awaiting each answer, until `maxCreates` or `maxSeconds`.
 *
 * @example
 *   await sequentialBaseline(sandbox, ids, 1000, 20); // { creates_per_s: ~45 at 20 ms latency, ... }
 */
export async function sequentialBaseline(
  sandbox: BenchSandbox,
  ids: readonly string[],
  maxCreates: number,
  maxSeconds: number,
): Promise<Record<string, unknown>> {
  const token = await rawToken(sandbox.info);
  const statuses: string[] = [];
  const t0 = performance.now();
  for (const id of ids.slice(0, maxCreates)) {
    if (performance.now() - t0 >= maxSeconds * 1000) break;
    statuses.push(await createRaw(sandbox, token, id));
  }
  const seconds = (performance.now() - t0) / 1000;
  const counts = tally(statuses);
  const ok = counts["200"] ?? 0;
  return {
    bound: `${maxCreates} creates or ${maxSeconds} s, whichever first`,
    attempted: statuses.length,
    statuses: counts,
    seconds: round(seconds),
    creates_per_s: round(ok / seconds, 1),
  };
}

/**
 * Baseline 2: every create at once (`Promise.all` of raw fetches), then how long the endpoint stays
 * shut: probed every 100 ms with a GET on the same path (refusals during a penalty do not extend
 * it) until an answer that is not 429. Its creates/s spans the whole episode, from the first
 * request to the reopening. The first 429 answer is timed as the client saw it, which under a burst
 * of thousands of sockets can be well after the sandbox started the penalty.
 */
export async function unboundedBaseline(
  sandbox: BenchSandbox,
  ids: readonly string[],
  penaltyS: number,
): Promise<Record<string, unknown>> {
  const token = await rawToken(sandbox.info);
  const before = await sandbox.stats();
  let first429: number | undefined;
  const t0 = performance.now();
  const statuses = await Promise.all(
    ids.map(async (id) => {
      const s = await createRaw(sandbox, token, id);
      if (s === "429" && first429 === undefined) first429 = performance.now();
      return s;
    }),
  );
  const burstS = (performance.now() - t0) / 1000;
  const after = await sandbox.stats();
  let reopenedAt = performance.now();
  const probeDeadline = reopenedAt + (penaltyS + 30) * 1000;
  for (;;) {
    const res = await fetch(`${sandbox.info.api_url}${CONTROLS}?identity_id=${ids[0]}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await res.arrayBuffer();
    reopenedAt = performance.now();
    if (res.status !== 429) break;
    if (reopenedAt > probeDeadline) throw new Error("the endpoint never reopened after the burst");
    await sleep(100);
  }
  const counts = tally(statuses);
  const ok = counts["200"] ?? 0;
  const episodeS = (reopenedAt - t0) / 1000;
  return {
    attempted: ids.length,
    statuses: counts,
    burst_seconds: round(burstS),
    rate_limited_429: counts["429"] ?? 0,
    sandbox_429: limited(after) - limited(before),
    sandbox_penalty_s: penaltyS,
    first_429_answer_after_s: first429 === undefined ? null : round((first429 - t0) / 1000),
    blocked_after_first_429_s:
      first429 === undefined ? 0 : round((reopenedAt - first429) / 1000, 1),
    burst_start_to_reopen_s: round(episodeS, 1),
    creates_lost: ids.length - ok,
    creates_per_s_including_penalty: round(ok / episodeS, 1),
    note: `sandbox penalty shortened to ${penaltyS} s for the bench; the platform's is 300 s, during which production traffic from the same address is refused too. The burst sends no retries: every 429 is a create not done.`,
  };
}
