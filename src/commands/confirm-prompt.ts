import { createInterface } from "node:readline/promises";
import type { PlatformConfig } from "../config.ts";
import type { RunMode } from "../db/schema.ts";
import type { PendingWrites } from "../migration/pipeline.ts";

/**
 * The confirmation question: what will be written, where, and as whom.
 *
 * @example
 *   confirmationQuestion("apply", { creates: 1000, deletes: 0 }, platform)
 *   // 'apply will create 1000 SELL_ONLY client controls on https://api.example.com as client
 *   //  c-1. Type "yes" to go ahead: '
 */
export function confirmationQuestion(
  mode: RunMode,
  writes: PendingWrites,
  platform: Pick<PlatformConfig, "apiUrl" | "clientId">,
): string {
  const what = [
    writes.creates ? `create ${writes.creates} SELL_ONLY client controls` : "",
    writes.deletes ? `delete ${writes.deletes} unexpected client SELL_ONLY controls (--prune)` : "",
  ]
    .filter(Boolean)
    .join(" and ");
  return `${mode} will ${what} on ${platform.apiUrl} as client ${platform.clientId}. Type "yes" to go ahead: `;
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
