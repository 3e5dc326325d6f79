/**
 * The requests-per-second timeline as inline SVG. A long run is folded into at most `MAX_BARS`
 * buckets (each bar is then the bucket's average rate), so the SVG stays a few tens of kilobytes
 * whether the run took a minute or a day. 429s, retries and ambiguous outcomes get a lane each
 * under the bars, with a tick wherever they happened.
 */
import { noun } from "../../plural.ts";
import { thousands } from "../../thousands.ts";
import { html, type SafeHtml } from "./html-text.ts";

/** One second of traffic, as the platform client measured it. */
export interface SeriesPoint {
  /** Unix time in whole seconds. */
  readonly at: number;
  readonly requests: number;
  readonly rateLimited: number;
  readonly retries: number;
  readonly ambiguous: number;
}

/** A pause, continue, rate change or hold, drawn where it happened. */
export interface SteerMark {
  /** Unix time in seconds (fractions allowed). */
  readonly at: number;
  /** What is written by its line: `pause`, `set-rate 4`, `quiet hours`... */
  readonly label: string;
}

const MAX_BARS = 600;
const LEFT = 56;
const PLOT_W = 840;
const TOP = 10;
const PLOT_H = 120;
const LANE_H = 14;
const LANES = [
  { key: "rateLimited", label: "429", tone: "mark-429" },
  { key: "retries", label: "retry", tone: "mark-retry" },
  { key: "ambiguous", label: "ambiguous", tone: "mark-ambiguous" },
] as const;

interface Bucket {
  start: number;
  requests: number;
  rateLimited: number;
  retries: number;
  ambiguous: number;
}

/** Folds the seconds into equal buckets covering `[from, to)`. */
function buckets(points: readonly SeriesPoint[], from: number, to: number) {
  const span = Math.max(1, to - from);
  const width = Math.max(1, Math.ceil(span / MAX_BARS));
  const n = Math.ceil(span / width);
  const out: Bucket[] = Array.from({ length: n }, (_, i) => ({
    start: from + i * width,
    requests: 0,
    rateLimited: 0,
    retries: 0,
    ambiguous: 0,
  }));
  for (const p of points) {
    const b = out[Math.min(n - 1, Math.max(0, Math.floor((p.at - from) / width)))];
    if (!b) continue;
    b.requests += p.requests;
    b.rateLimited += p.rateLimited;
    b.retries += p.retries;
    b.ambiguous += p.ambiguous;
  }
  return { out, width };
}

const offset = (s: number) =>
  s < 120 ? `+${s} s` : s < 7200 ? `+${Math.round(s / 60)} min` : `+${(s / 3600).toFixed(1)} h`;

/**
 * Up to five x-axis labels, none repeating: on a short run several fractions round to the same
 * second, and only the first of each is kept.
 */
function axisLabels(span: number): { f: number; text: string }[] {
  const seen = new Set<string>();
  const out: { f: number; text: string }[] = [];
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    const text = offset(Math.round(f * span));
    if (seen.has(text)) continue;
    seen.add(text);
    out.push({ f, text });
  }
  return out;
}

/**
 * The timeline of a run that started at `startedAt` and finished at `finishedAt` (Unix seconds).
 *
 * @example
 *   timelineChart(series, 1_700_000_000, 1_700_000_042)
 */
export function timelineChart(
  points: readonly SeriesPoint[],
  startedAt: number,
  finishedAt: number,
  marks: readonly SteerMark[] = [],
): SafeHtml {
  const total = (k: keyof Omit<SeriesPoint, "at">) => points.reduce((n, p) => n + p[k], 0);
  const totals = {
    requests: total("requests"),
    rateLimited: total("rateLimited"),
    retries: total("retries"),
    ambiguous: total("ambiguous"),
  };
  const caption = html`<p class="timeline-totals" data-requests="${totals.requests}" data-rate-limited="${totals.rateLimited}" data-retries="${totals.retries}" data-ambiguous="${totals.ambiguous}">${thousands(totals.requests)} API ${noun(totals.requests, "request")} (token requests apart, in the table below), ${totals.rateLimited} answered 429, ${totals.retries} ${noun(totals.retries, "retry", "retries")}, ${totals.ambiguous} ambiguous ${noun(totals.ambiguous, "outcome")}.</p>`;
  if (points.length === 0) {
    return html`${caption}<p class="muted">No platform request was recorded for this run.</p>`;
  }
  const from = Math.min(startedAt, points[0]?.at ?? startedAt);
  const to = Math.max(finishedAt, (points[points.length - 1]?.at ?? finishedAt) + 1);
  const { out, width } = buckets(points, from, to);
  const barW = PLOT_W / out.length;
  const peak = Math.max(1, ...out.map((b) => b.requests / width));
  const bars = out.map((b, i) => {
    if (b.requests === 0) return "";
    const rate = b.requests / width;
    const h = Math.max(1, (rate / peak) * PLOT_H);
    const tip = `${offset(b.start - from)}: ${Math.round(rate * 10) / 10} requests/s`;
    return html`<rect class="rps" x="${(LEFT + i * barW).toFixed(1)}" y="${(TOP + PLOT_H - h).toFixed(1)}" width="${Math.max(1, barW - 0.5).toFixed(1)}" height="${h.toFixed(1)}"><title>${tip}</title></rect>`;
  });
  const lanes = LANES.map((lane, li) => {
    const y = TOP + PLOT_H + 6 + li * LANE_H;
    const ticks = out.map((b, i) =>
      b[lane.key] > 0
        ? html`<rect class="${lane.tone}" x="${(LEFT + i * barW).toFixed(1)}" y="${y}" width="${Math.max(2, barW - 0.5).toFixed(1)}" height="${LANE_H - 4}"><title>${offset(b.start - from)}: ${b[lane.key]} × ${lane.label}</title></rect>`
        : "",
    );
    return html`<text class="axis" x="${LEFT - 6}" y="${y + 9}" text-anchor="end">${lane.label}</text>${ticks}`;
  });
  const axisY = TOP + PLOT_H + 6 + LANES.length * LANE_H + 12;
  const span = to - from;
  const xLabels = axisLabels(span).map(
    ({ f, text }) =>
      html`<text class="axis" x="${(LEFT + f * PLOT_W).toFixed(1)}" y="${axisY}" text-anchor="${f === 0 ? "start" : f === 1 ? "end" : "middle"}">${text}</text>`,
  );
  const steer = marks.map((m, i) => {
    const x = (LEFT + Math.min(1, Math.max(0, (m.at - from) / span)) * PLOT_W).toFixed(1);
    // Staggered in three rows, so that events close together keep readable labels.
    const y = TOP + 10 + (i % 3) * 12;
    return html`<g class="steer" data-label="${m.label}"><line class="steer-line" x1="${x}" x2="${x}" y1="${TOP}" y2="${TOP + PLOT_H}"></line><text class="steer-label" x="${x}" y="${y}" dx="3">${m.label}</text></g>`;
  });
  const height = axisY + 6;
  const svgWidth = LEFT + PLOT_W + 4;
  const peakLabel = `${Math.round(peak * 10) / 10}/s`;
  const svg = html`<svg id="timeline" class="chart" role="img" aria-label="Requests per second over the run" viewBox="0 0 ${svgWidth} ${height}" width="${svgWidth}" height="${height}" xmlns="http://www.w3.org/2000/svg"><title>Requests per second${width > 1 ? ` (average over ${width} s buckets)` : ""}</title>
<line class="grid" x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${TOP}" y2="${TOP}"></line>
<line class="grid" x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${TOP + PLOT_H}" y2="${TOP + PLOT_H}"></line>
<text class="axis" x="${LEFT - 6}" y="${TOP + 4}" text-anchor="end">${peakLabel}</text>
<text class="axis" x="${LEFT - 6}" y="${TOP + PLOT_H}" text-anchor="end">0</text>
${bars}${steer}${lanes}${xLabels}</svg>`;
  return html`${svg}${caption}`;
}
