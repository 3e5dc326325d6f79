import { createInterface } from "node:readline/promises";
import type { PlatformConfig } from "../config.ts";
import type { RunMode } from "../db/schema.ts";
import type { PendingWrites } from "../migration/run/pipeline.ts";

/**
 * What this invocation will send of `writes` under `--limit`: the count and the words that say
 * how many stay for later (empty when all are sent).
 *
 * @example
 *   limitedWrites({ creates: 117, deletes: 0 }, 3, "apply")
 *   // { sent: 3, total: 117, rest: "; the other 114 stay pending for a later apply" }
 */
export function limitedWrites(
  writes: PendingWrites,
  limit: number | undefined,
  later: string,
): { sent: number; total: number; rest: string } {
  const total = writes.creates + writes.deletes;
  const sent = limit === undefined ? total : Math.min(limit, total);
  const rest = sent < total ? `; the other ${total - sent} stay pending for a later ${later}` : "";
  return { sent, total, rest };
}

/**
 * The confirmation question: exactly what this invocation will write (under `--limit`, how many
 * and how many stay for later), where, and as whom.
 *
 * @example
 *   confirmationQuestion("apply", { creates: 117, deletes: 0 }, platform, 3)
 *   // 'apply will create 3 SELL_ONLY client controls (--limit 3 of 117; the other 114 stay
 *   //  pending for a later apply) on https://api.example.com as client c-1. Type "yes" to go ahead: '
 */
export function confirmationQuestion(
  mode: RunMode,
  writes: PendingWrites,
  platform: Pick<PlatformConfig, "apiUrl" | "clientId">,
  limit?: number,
): string {
  const { sent, total, rest } = limitedWrites(writes, limit, mode);
  const creates = writes.deletes === 0 ? sent : writes.creates;
  const deletes = writes.creates === 0 ? sent : writes.deletes;
  const what = [
    writes.creates ? `create ${creates} SELL_ONLY client controls` : "",
    writes.deletes ? `delete ${deletes} unexpected client SELL_ONLY controls (--prune)` : "",
  ]
    .filter(Boolean)
    .join(" and ");
  const mixed = writes.creates > 0 && writes.deletes > 0;
  const limited =
    sent < total
      ? mixed
        ? ` — only the first ${sent} of these ${total} writes in journal order (--limit ${limit})${rest} —`
        : ` (--limit ${limit} of ${total}${rest})`
      : "";
  return `${mode} will ${what}${limited} on ${platform.apiUrl} as client ${platform.clientId}. Type "yes" to go ahead: `;
}

/**
 * Asks on the terminal; true only for the answer "yes". Ctrl-C at the prompt reaches readline,
 * not the process (the terminal is in raw mode): it is passed on as the SIGINT it means, which
 * aborts `signal` and ends the question with false. End of input (Ctrl-D) is a no.
 */
export async function askOnTerminal(question: string, signal: AbortSignal): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  rl.on("SIGINT", () => process.kill(process.pid, "SIGINT"));
  const closed = new Promise<string>((resolve) => rl.once("close", () => resolve("")));
  try {
    const answer = await Promise.race([rl.question(question, { signal }), closed]);
    return answer.trim().toLowerCase() === "yes";
  } catch (err) {
    if (signal.aborted) return false;
    throw err;
  } finally {
    rl.close();
  }
}
