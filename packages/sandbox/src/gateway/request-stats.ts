import type { RequestWindowCounts } from "../types.ts";

/** How a request fared at the rate limiter. */
export const Outcome = { served: 0, limited: 1, penalty: 2 } as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

const RING = 1 << 18;

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/**
 * Request counters for the stats surface, plus a ring of the last 262,144 requests' (time,
 * endpoint, outcome), so a test can ask how many requests reached an endpoint during a penalty.
 * Fixed-size typed arrays keep the cost flat under a benchmark's millions of requests.
 *
 * @example
 *   const stats = new RequestStats();
 *   stats.outcome("/v2/identity/controls", Outcome.served, Date.now());
 *   stats.window({ from: 0 }).served; // 1
 */
export class RequestStats {
  private byRoute = new Map<string, Map<string, number>>();
  private served = new Map<string, number>();
  private limited = new Map<string, number>();
  private refused = new Map<string, number>();
  private readonly times = new Float64Array(RING);
  private readonly endpoints = new Uint16Array(RING);
  private readonly outcomes = new Uint8Array(RING);
  private readonly endpointIds = new Map<string, number>();
  private next = 0;
  private size = 0;

  /** Counts the answer of `route` ("GET /v2/identity/controls") with `status` (or "hang"). */
  status(route: string, status: number | string): void {
    let m = this.byRoute.get(route);
    if (!m) {
      m = new Map();
      this.byRoute.set(route, m);
    }
    bump(m, String(status));
  }

  outcome(endpoint: string, outcome: Outcome, now: number): void {
    if (outcome === Outcome.served) bump(this.served, endpoint);
    else {
      bump(this.limited, endpoint);
      if (outcome === Outcome.penalty) bump(this.refused, endpoint);
    }
    let id = this.endpointIds.get(endpoint);
    if (id === undefined) {
      id = this.endpointIds.size;
      this.endpointIds.set(endpoint, id);
    }
    this.times[this.next] = now;
    this.endpoints[this.next] = id;
    this.outcomes[this.next] = outcome;
    this.next = (this.next + 1) % RING;
    if (this.size < RING) this.size++;
  }

  /** Outcomes in [from, to] for one endpoint path (or all); exact for the last 262,144 requests. */
  window(w: { from: number; to?: number; endpoint?: string }): RequestWindowCounts {
    const to = w.to ?? Number.POSITIVE_INFINITY;
    const id = w.endpoint === undefined ? undefined : this.endpointIds.get(w.endpoint);
    const counts: RequestWindowCounts = { served: 0, rateLimited: 0, refusedByPenalty: 0 };
    if (w.endpoint !== undefined && id === undefined) return counts;
    for (let k = 0; k < this.size; k++) {
      const t = this.times[k]!;
      if (t < w.from || t > to) continue;
      if (id !== undefined && this.endpoints[k] !== id) continue;
      const o = this.outcomes[k];
      if (o === Outcome.served) counts.served++;
      else if (o === Outcome.limited) counts.rateLimited++;
      else counts.refusedByPenalty++;
    }
    return counts;
  }

  snapshot(): {
    requests: Record<string, Record<string, number>>;
    served: Record<string, number>;
    rateLimited: Record<string, number>;
    refusedByPenalty: Record<string, number>;
  } {
    const requests: Record<string, Record<string, number>> = {};
    for (const [route, m] of this.byRoute) requests[route] = Object.fromEntries(m);
    return {
      requests,
      served: Object.fromEntries(this.served),
      rateLimited: Object.fromEntries(this.limited),
      refusedByPenalty: Object.fromEntries(this.refused),
    };
  }

  reset(): void {
    this.byRoute = new Map();
    this.served = new Map();
    this.limited = new Map();
    this.refused = new Map();
    this.next = 0;
    this.size = 0;
  }
}
