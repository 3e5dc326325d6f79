import { join } from "node:path";
import type { Logger } from "../log.ts";
import type { RunSummary } from "./summary.ts";

/**
 * The run's end as one log line with the counts as fields: what `--log-format json` prints in
 * place of the terminal table, so a log shipper gets the figures without parsing text.
 *
 * @example
 *   logSummary(logger, summary);
 *   // {"level":"info","time":"…","run_id":"…","mode":"plan","status":"completed","exit_code":2,
 *   //  "findings":{…},"outcomes":{…},"message":"plan 20261122-101500-ab12 completed (exit 2)"}
 */
export function logSummary(logger: Logger, s: RunSummary): void {
  logger.info(`${s.mode} ${s.run_id} ${s.status} (exit ${s.exit_code})`, {
    mode: s.mode,
    status: s.status,
    exit_code: s.exit_code,
    duration_s: s.duration_s,
    source: s.source,
    findings: s.findings,
    outcomes: s.outcomes,
    ...(s.changes ? { changes: s.changes } : {}),
    requests: Object.fromEntries(Object.entries(s.requests).map(([k, v]) => [k, v.count])),
    report_dir: s.reports.dir,
    report_html: join(s.reports.dir, "report.html"),
  });
}
