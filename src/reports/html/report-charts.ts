/**
 * report.html's charts of a run: its findings (found → left after its actions, for a run that
 * acts), its action outcomes coloured by meaning, and its steering events on the requests chart.
 */
import type { RunSummary } from "../summary.ts";
import { type Bar, barChart } from "./bar-chart.ts";
import { beforeAfterChart } from "./before-after-chart.ts";
import { html, type SafeHtml } from "./html-text.ts";
import { findingTone, outcomeMeaning, outcomeTone } from "./outcome-tone.ts";
import type { SteerMark } from "./timeline-chart.ts";

/** Findings by category: a plan's counts, or a writer's before → after. */
export function findingsChart(s: RunSummary): SafeHtml {
  // A revert classifies nothing: it undoes a run's actions. Only kinds it holds are shown.
  const kinds = Object.keys(s.findings).filter(
    (k) => s.mode !== "revert" || (s.findings[k] ?? 0) > 0 || (s.findings_left?.[k] ?? 0) > 0,
  );
  if (kinds.length === 0) {
    return html`<h3>Findings</h3><p id="findings-chart" class="muted">None: a revert classifies no findings; it undoes the actions of run ${s.revert?.of_run_id ?? "it names"}.</p>`;
  }
  // A kind the run's reads cannot see is "not looked for", never a plain 0 (issue 50).
  const unseen = new Set(s.coverage?.not_looked_for ?? []);
  const label = (k: string) => (unseen.has(k) ? `${k} (not looked for)` : k);
  if (s.mode === "plan" || !s.findings_left) {
    const bars: Bar[] = kinds.map((k) => ({
      label: label(k),
      count: s.findings[k] ?? 0,
      tone: findingTone(k),
    }));
    return html`<h3>Findings by category</h3>${barChart("findings-chart", "Findings by category", bars)}`;
  }
  const rows = kinds.map((k) => ({
    label: label(k),
    before: s.findings[k] ?? 0,
    after: s.findings_left?.[k] ?? s.findings[k] ?? 0,
    tone: findingTone(k),
  }));
  return html`<h3>Findings: found → left after the run</h3>${beforeAfterChart("findings-chart", "Findings found, and left after the run's actions", rows)}<p class="meaning">Pale: found when the run read the platform. Coloured: left once its own actions were done.</p>`;
}

/** Action outcomes by `status:outcome`, each with its colour's meaning in words. */
export function outcomesChart(s: RunSummary): SafeHtml {
  const keys = Object.keys(s.outcomes);
  if (keys.length === 0)
    return html`<h3>Action outcomes</h3><p id="outcomes-chart">No actions.</p>`;
  const bars: Bar[] = keys.map((k) => ({
    label: k,
    count: s.outcomes[k] ?? 0,
    tone: outcomeTone(k),
  }));
  const legend = keys.map(
    (k) =>
      html`<li data-outcome="${k}"><span class="swatch ${outcomeTone(k)}"></span><span class="mono">${k}</span>: ${outcomeMeaning(k)}</li>`,
  );
  return html`<h3>Action outcomes</h3>${barChart("outcomes-chart", "Action outcomes by status", bars)}<ul class="meaning" id="outcome-meanings">${legend}</ul>`;
}

const STEER_LABELS: Record<string, string> = {
  pause: "pause",
  continue: "continue",
  throttle_on: "throttle",
  throttle_off: "throttle off",
  window_closed: "quiet hours",
  window_open: "quiet hours over",
  source_reread: "source re-read",
};

/** The run's pauses, continues, rate changes and holds, as marks of the requests chart. */
export function steerMarks(s: RunSummary): SteerMark[] {
  return (s.control_events ?? []).map((e) => ({
    at: Date.parse(e.at) / 1000,
    label: e.event === "set_rate" ? `set-rate ${e.rate}` : (STEER_LABELS[e.event] ?? e.event),
  }));
}
