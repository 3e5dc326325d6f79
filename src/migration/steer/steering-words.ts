/**
 * The words a steering command (`pause`, `continue`, `set-rate`) answers with once the run has
 * taken the change: shared by the command itself and by the running writer answering a request
 * on the local channel.
 */
import type { ControlChange } from "../../db/journal/run-control-queries.ts";

/**
 * The words a steering command answers with.
 *
 * @example
 *   describeChange("r1", { kind: "set_rate", rate: 5 }) // "Run r1's write budget is now 5 requests/s."
 */
export function describeChange(runId: string, change: ControlChange): string {
  if (change.kind === "pause")
    return `Run ${runId} paused: no new write is sent; requests in flight finish. Continue with: controls-migrate continue ${runId}`;
  if (change.kind === "continue") return `Run ${runId} continues writing.`;
  return `Run ${runId}'s write budget is now ${change.rate} requests/s.`;
}
