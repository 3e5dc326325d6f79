/**
 * Benchmark (not a test): time to parse and normalise one 1000-identity page of
 * `GET /v2/identity/identities` (JSON.parse plus the wire parsers), the client's hot path during
 * the snapshot. Prints one JSON line.
 *
 *   node test/bench/client-parse.ts
 */

import { syntheticIdentities } from "../../src/contract/index.ts";
import { parseIdentitiesPage } from "../../src/platform/wire-parsers.ts";

const control = (i: number, setBy: string) => ({
  id: `ctl-${i}-${setBy}`,
  type: "SELL_ONLY",
  set_by: setBy,
  is_overridable: setBy === "CLIENT",
  reason_code: "OTHER",
  reason: "migrated from the legacy flag",
  created_at: "2024-05-01T10:00:00.000Z",
});

const items = [...syntheticIdentities(1000, 42)].map((r, i) => ({
  id: r.id,
  created_at: new Date(1_700_000_000_000 + i * 1000).toISOString(),
  user_disabled: r.user_disabled,
  admin_disabled: r.admin_disabled,
  status_details: {
    active_controls: [
      ...(r.user_disabled ? [control(i, "CLIENT")] : []),
      ...(r.admin_disabled ? [control(i, "SERVICE")] : []),
      ...(i % 10 === 0 ? [control(i, "SET_BY_SERVICE")] : []),
    ],
  },
}));
const text = JSON.stringify({ items, next_page_cursor: "opaque-cursor" });

const EP = "GET /v2/identity/identities";
for (let i = 0; i < 50; i++) parseIdentitiesPage(JSON.parse(text), EP); // warm-up

const rounds = 300;
let parseMs = 0;
let normaliseMs = 0;
for (let i = 0; i < rounds; i++) {
  const t0 = performance.now();
  const raw = JSON.parse(text);
  const t1 = performance.now();
  const page = parseIdentitiesPage(raw, EP);
  const t2 = performance.now();
  if (page.items.length !== 1000) throw new Error("lost items");
  parseMs += t1 - t0;
  normaliseMs += t2 - t1;
}
const round = (n: number) => Math.round(n * 1000) / 1000;
process.stdout.write(
  `${JSON.stringify({
    bench: "client-parse",
    page_identities: 1000,
    page_bytes: text.length,
    json_parse_ms_per_page: round(parseMs / rounds),
    normalise_ms_per_page: round(normaliseMs / rounds),
    total_ms_per_page: round((parseMs + normaliseMs) / rounds),
  })}\n`,
);
