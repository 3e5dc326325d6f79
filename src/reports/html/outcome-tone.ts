/**
 * What a colour means in report.html, the same for every run: green is done, grey is nothing to
 * do or not on the platform (a create answered 404 is no failure: README "Exit codes"), red is
 * failed and needs attention, purple is in doubt, orange is work still to do.
 */

/** The bar class of a summary `outcomes` key (`status:outcome`). */
export function outcomeTone(key: string): string {
  const [status, outcome] = key.split(":");
  if (status === "succeeded") return "bar-ok";
  if (status === "skipped") return "bar-muted";
  if (status === "failed") return outcome === "identity_not_found" ? "bar-muted" : "bar-bad";
  if (status === "ambiguous") return "bar-odd";
  return "bar-warn";
}

/** What an outcome key means, in words, shown beside its bar. */
export function outcomeMeaning(key: string): string {
  const tone = outcomeTone(key);
  if (key === "failed:identity_not_found") return "not on the platform (404): no failure";
  if (key === "skipped:awaiting_platform_migration")
    return "the platform's legacy field turned true before the send: its migration will create it";
  if (key === "skipped:source_changed")
    return "the source's flag was cleared before the send: not sent";
  if (tone === "bar-ok") return "done";
  if (tone === "bar-muted") return "nothing to do";
  if (tone === "bar-bad") return "failed: needs attention";
  if (tone === "bar-odd") return "outcome unknown";
  return "still to do";
}

/** The bar class of a finding kind: in sync green, report-only blue, work orange, bad red. */
export function findingTone(kind: string): string {
  if (kind === "in_sync") return "bar-ok";
  if (kind === "missing_client_control") return "bar-warn";
  if (kind === "read_failed" || kind === "invalid_source_row") return "bar-bad";
  if (kind === "identity_not_found") return "bar-muted";
  return "bar-info";
}
