/**
 * report.html's three-way table (issue 27): the run's findings counted per flag, source value (L),
 * the platform's legacy field (P) and finding, and what the platform's own migration will still do
 * by itself: the figures of summary.json's `three_way`, as summary.md shows them.
 */
import type { ThreeWaySummary } from "../three-way-section.ts";
import { html, type SafeHtml } from "./html-text.ts";

const yn = (v: boolean | null) => (v === null ? "?" : v ? "true" : "false");

/** The section, or nothing when the run read no legacy field. */
export function threeWaySection(t: ThreeWaySummary | null | undefined): SafeHtml | "" {
  if (!t) return "";
  const w = t.platform_will;
  const rows = t.cells.map(
    (c) =>
      html`<tr data-flag="${c.flag}" data-source="${yn(c.source)}" data-platform="${yn(c.platform)}" data-finding="${c.finding}"><td>${c.flag}</td><td>${yn(c.source)}</td><td>${yn(c.platform)}</td><td class="mono">${c.finding}</td><td class="num">${c.count}</td></tr>`,
  );
  return html`<h2>Three-way: source (L), the platform's legacy field (P), its controls</h2>
<table id="three-way"><thead><tr><th>flag</th><th>L</th><th>P</th><th>finding</th><th>count</th></tr></thead><tbody>${rows}</tbody></table>
<p id="platform-will" data-client="${w.create_client_controls}" data-service="${w.create_service_controls}" data-restrict="${w.restrict_cleared_identities}">The platform's own migration will still create ${w.create_client_controls} CLIENT and ${w.create_service_controls} SERVICE SELL_ONLY controls, and restrict ${w.restrict_cleared_identities} identities the client has cleared.</p>`;
}
