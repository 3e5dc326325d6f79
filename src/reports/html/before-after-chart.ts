/**
 * Findings before and after a run, side by side: for each category a pale bar of what the run
 * found and, under it, a bar of what is left once its own actions are done, with both counts as
 * text (`487 → 0`), so that a reviewer sees at once what the run changed.
 */
import { thousands } from "../../thousands.ts";
import { html, type SafeHtml } from "./html-text.ts";

export interface BeforeAfter {
  readonly label: string;
  readonly before: number;
  readonly after: number;
  readonly tone: string;
}

const ROW = 34;
const LABEL_W = 250;
const BAR_W = 330;
const COUNT_W = 130;

/**
 * One pair of bars per category, scaled to the largest count.
 *
 * @example
 *   beforeAfterChart("findings-chart", "Findings", [{ label: "missing_client_control", before: 487, after: 0, tone: "bar-warn" }])
 */
export function beforeAfterChart(
  id: string,
  title: string,
  rows: readonly BeforeAfter[],
): SafeHtml {
  const max = Math.max(1, ...rows.flatMap((r) => [r.before, r.after]));
  const scale = (n: number) => (n === 0 ? 0 : Math.max(2, Math.round((n / max) * BAR_W)));
  const height = rows.length * ROW + 4;
  const width = LABEL_W + BAR_W + COUNT_W;
  const body = rows.map((r, i) => {
    const y = i * ROW + 2;
    return html`<g class="bar-row" data-label="${r.label}" data-before="${r.before}" data-after="${r.after}">
<text class="bar-label" x="${LABEL_W - 8}" y="${y + 20}" text-anchor="end">${r.label}</text>
<rect class="bar-track" x="${LABEL_W}" y="${y + 3}" width="${BAR_W}" height="${ROW - 8}"></rect>
<rect class="bar bar-before" x="${LABEL_W}" y="${y + 3}" width="${scale(r.before)}" height="${(ROW - 8) / 2}"><title>found: ${r.before}</title></rect>
<rect class="bar ${r.tone}" x="${LABEL_W}" y="${y + 3 + (ROW - 8) / 2}" width="${scale(r.after)}" height="${(ROW - 8) / 2}"><title>left after the run: ${r.after}</title></rect>
<text class="bar-count" x="${LABEL_W + BAR_W + 8}" y="${y + 20}">${thousands(r.before)} → ${thousands(r.after)}</text>
</g>`;
  });
  return html`<svg id="${id}" class="chart" role="img" aria-label="${title}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg"><title>${title}</title>${body}</svg>`;
}
