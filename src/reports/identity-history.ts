/**
 * `controls-migrate show`: one identity's history, newest run first, for people (text) and for
 * scripts (JSON). Values come from the user's database and the platform, so control and
 * bidi-control characters are shown as visible escapes in both.
 */
import type { IdentityInRun } from "../db/report-queries/history-queries.ts";
import { escapeInvisible } from "../visible-text.ts";
import { ownerSpelling } from "./owner-spelling.ts";

/** One run's view of the identity, as `history-queries.ts` reads it. */
type RunView = IdentityInRun;

const flag = (v: boolean | null) => (v === null ? "NULL" : String(v));
const overridable = (v: boolean) => (v ? "overridable" : "not overridable");
const join = (...parts: (string | null | undefined | false)[]) =>
  parts.filter((p) => p !== null && p !== undefined && p !== false && p !== "").join(" ");

const owner = <T extends string | null>(v: T): T => (v === null ? v : ownerSpelling(v)) as T;

/**
 * The run view with every owner in the reports' one spelling (`CLIENT`, `SERVICE`): the
 * platform's `SET_BY_CLIENT` is shown as `CLIENT` in text and JSON alike; ids stay verbatim.
 */
function withOwnerSpelling(r: RunView): RunView {
  return {
    ...r,
    controls: r.controls.map((c) => ({ ...c, set_by: owner(c.set_by) })),
    findings: r.findings.map((f) => ({
      ...f,
      expected_set_by: owner(f.expected_set_by),
      observed_set_by: owner(f.observed_set_by),
      other_active_controls: owner(f.other_active_controls),
      detail: owner(f.detail),
    })),
    outside_changes: (r.outside_changes ?? []).map((c) => ({
      ...c,
      set_by: owner(c.set_by),
      detail: owner(c.detail),
    })),
  };
}

/** What the source line says when the run stored no row: a deleted row says so, and when. */
function noRow(r: RunView): string {
  const removed = (r.outside_changes ?? []).find((c) => c.change === "source_row_removed");
  if (removed) {
    return `the row was deleted (first seen missing at ${new Date(removed.seen_at).toISOString()}, since run ${removed.since_run_id})`;
  }
  const orphan = r.findings.find((f) => f.finding === "orphaned_own_control");
  if (orphan) return `the row is gone${orphan.detail ? ` (${orphan.detail})` : ""}`;
  return "no row stored (no flag set, or not in the source)";
}

function runLines(view: RunView): string[] {
  const r = withOwnerSpelling(view);
  const lines = [
    `run ${r.run_id}  ${r.mode}  ${r.status}  exit ${r.exit_code ?? "-"}  started ${r.started_at.toISOString()}`,
  ];
  if (r.source.length === 0) lines.push(`  source    ${noRow(r)}`);
  for (const s of r.source) {
    const anomaly = s.anomaly
      ? `  ${s.anomaly}${s.anomaly_detail ? `: ${s.anomaly_detail}` : ""}`
      : "";
    const kind = s.seq < 0 ? " (looked up)" : ` (row ${s.seq})`;
    lines.push(
      `  source    user_disabled=${flag(s.user_disabled)} admin_disabled=${flag(s.admin_disabled)}${kind}${anomaly}`,
    );
  }
  if (!r.platform) lines.push("  platform  not read in this run");
  else {
    const controls =
      r.controls.length === 0
        ? "no active control"
        : r.controls
            .map((c) => `${c.type} ${c.control_id} ${c.set_by} ${overridable(c.is_overridable)}`)
            .join("; ");
    const error = r.platform.error ? ` (${r.platform.error})` : "";
    const p = r.platform;
    const legacy =
      p.user_disabled == null && p.admin_disabled == null
        ? ""
        : ` legacy user_disabled=${flag(p.user_disabled ?? null)} admin_disabled=${flag(p.admin_disabled ?? null)}`;
    lines.push(`  platform  ${p.status}${error}${legacy}: ${controls}`);
  }
  for (const f of r.findings) {
    const expected = join(f.expected_type, f.expected_set_by);
    const observed = join(f.observed_control_id, f.observed_set_by);
    lines.push(
      `  finding   ${join(f.finding, expected && `expected ${expected}`, observed && `observed ${observed}`, f.detail && `(${f.detail})`)}`,
    );
  }
  for (const c of r.outside_changes ?? []) {
    lines.push(
      `  outside   ${join(
        c.change,
        c.control_id && `control ${c.control_id}`,
        c.set_by,
        c.detail && `(${c.detail})`,
        c.undone && "undid the tool's write",
        `since run ${c.since_run_id}, seen at ${new Date(c.seen_at).toISOString()}`,
      )}`,
    );
  }
  for (const a of r.actions) {
    lines.push(
      `  action    ${join(
        a.action,
        a.control_type,
        `${a.status}${a.outcome ? ` ${a.outcome}` : ""}`,
        a.http_status !== null && `HTTP ${a.http_status}`,
        `${a.attempts} attempt${a.attempts === 1 ? "" : "s"}`,
        a.result_control_id && `control ${a.result_control_id}`,
        a.action === "delete" && `control ${a.control_key}`,
        a.error && `error: ${a.error}`,
        `at ${new Date(a.updated_at).toISOString()}`,
      )}`,
    );
  }
  return lines;
}

/**
 * The page as text. `next` is the command for the older runs when the page is full.
 *
 * @example
 *   process.stdout.write(renderIdentityHistory(id, page, "controls-migrate show ID --before R"));
 */
export function renderIdentityHistory(
  identityId: string,
  runs: readonly RunView[],
  next: string | null,
): string {
  if (runs.length === 0) {
    return escapeInvisible(`No run stored anything about identity ${identityId}.\n`, {
      keepNewlines: true,
    });
  }
  const blocks = [
    `identity ${identityId}, newest run first`,
    ...runs.map((r) => runLines(r).join("\n")),
  ];
  if (next) blocks.push(`Older runs: ${next}`);
  return escapeInvisible(`${blocks.join("\n\n")}\n`, { keepNewlines: true });
}

/**
 * The page as one JSON object: `{identity_id, runs, next_before}` (`next_before`: the run id to
 * pass as `--before` for the older runs, or null).
 *
 * @example
 *   JSON.parse(renderIdentityHistoryJson(id, page, null)).runs[0].findings
 */
export function renderIdentityHistoryJson(
  identityId: string,
  runs: readonly RunView[],
  nextBefore: string | null,
): string {
  const text = JSON.stringify({
    identity_id: identityId,
    runs: runs.map(withOwnerSpelling),
    next_before: nextBefore,
  });
  // JSON escapes C0 controls already; DEL, C1 and bidi controls can only sit inside its strings.
  return `${escapeInvisible(text)}\n`;
}
