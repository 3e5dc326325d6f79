/**
 * Horizontal bar charts as inline SVG: a few hundred bytes each, no library, no script. Every bar
 * carries its label and its exact count as text, so the chart is also the table (and a test can
 * read what is shown).
 */
import { thousands } from "../../thousands.ts";
import { html, type SafeHtml } from "./html-text.ts";

export interface Bar {
  readonly label: string;
  readonly count: number;
  /** A CSS class giving the bar its colour (`bar-ok`, `bar-warn`, ...). */
  readonly tone?: string;
}

const ROW = 22;
const LABEL_W = 250;
const BAR_W = 360;
const COUNT_W = 90;

/**
 * One bar per item, scaled to the largest count; a zero count shows an empty track.
 *
 * @example
 *   barChart("findings", "Findings by category", [{ label: "in_sync", count: 12 }])
 */
export function barChart(id: string, title: string, bars: readonly Bar[]): SafeHtml {
  const max = Math.max(1, ...bars.map((b) => b.count));
  const height = bars.length * ROW + 4;
  const width = LABEL_W + BAR_W + COUNT_W;
  const rows = bars.map((b, i) => {
    const y = i * ROW + 2;
    const w = b.count === 0 ? 0 : Math.max(2, Math.round((b.count / max) * BAR_W));
    return html`<g class="bar-row" data-label="${b.label}" data-count="${b.count}">
<text class="bar-label" x="${LABEL_W - 8}" y="${y + 15}" text-anchor="end">${b.label}</text>
<rect class="bar-track" x="${LABEL_W}" y="${y + 3}" width="${BAR_W}" height="${ROW - 6}"></rect>
<rect class="bar ${b.tone ?? "bar-info"}" x="${LABEL_W}" y="${y + 3}" width="${w}" height="${ROW - 6}"></rect>
<text class="bar-count" x="${LABEL_W + BAR_W + 8}" y="${y + 15}">${thousands(b.count)}</text>
</g>`;
  });
  return html`<svg id="${id}" class="chart" role="img" aria-label="${title}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg"><title>${title}</title>${rows}</svg>`;
}
