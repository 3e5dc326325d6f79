const BUCKETS = 20;

export type RateDecision =
  | { kind: "ok" }
  /** This request went over the limit; a penalty starts now (unless penaltyS is 0). */
  | { kind: "limited"; retryAfterS: number }
  /** Refused because a penalty is running; does not extend it. */
  | { kind: "penalty"; retryAfterS: number };

interface WindowState {
  counts: Int32Array;
  total: number;
  head: number;
  penaltyUntil: number;
}

export interface RateLimitSettings {
  /** Average requests per second allowed over the window; 0 turns the limit off. */
  rps: number;
  windowS: number;
  penaltyS: number;
}

/**
 * The platform's rate limit: per (client address, endpoint path), at most `rps × windowS` requests
 * in any sliding window of `windowS` seconds (kept as 20 buckets). The request over the limit is
 * answered 429 and starts a penalty of `penaltyS` seconds during which every request from that
 * client to that endpoint is refused, without extending it.
 *
 * @example
 *   const limiter = new RateLimiter(() => ({ rps: 2, windowS: 1, penaltyS: 2 }));
 *   limiter.check("127.0.0.1", "/v2/identity/controls", Date.now()); // { kind: "ok" }
 */
export class RateLimiter {
  private states = new Map<string, WindowState>();

  /** `settings` is asked per request, with the endpoint, so each endpoint can have its own rps. */
  private readonly settings: (endpoint: string) => RateLimitSettings;

  constructor(settings: (endpoint: string) => RateLimitSettings) {
    this.settings = settings;
  }

  check(client: string, endpoint: string, now: number): RateDecision {
    const { rps, windowS, penaltyS } = this.settings(endpoint);
    if (rps <= 0) return { kind: "ok" };
    const key = `${client} ${endpoint}`;
    let s = this.states.get(key);
    if (!s) {
      s = { counts: new Int32Array(BUCKETS), total: 0, head: 0, penaltyUntil: 0 };
      this.states.set(key, s);
    }
    if (s.penaltyUntil > now) {
      return {
        kind: "penalty",
        retryAfterS: Math.max(1, Math.ceil((s.penaltyUntil - now) / 1000)),
      };
    }
    const bucketMs = (windowS * 1000) / BUCKETS;
    if (s.penaltyUntil !== 0) {
      // A served penalty wipes the slate: the client starts afresh, as after five quiet minutes.
      s.penaltyUntil = 0;
      s.counts.fill(0);
      s.total = 0;
    }
    this.advance(s, Math.floor(now / bucketMs));
    const allowed = Math.max(1, Math.floor(rps * windowS));
    if (s.total + 1 > allowed) {
      if (penaltyS > 0) {
        s.penaltyUntil = now + penaltyS * 1000;
        return { kind: "limited", retryAfterS: Math.max(1, Math.ceil(penaltyS)) };
      }
      return { kind: "limited", retryAfterS: Math.max(1, Math.ceil(bucketMs / 1000)) };
    }
    s.counts[s.head % BUCKETS]! += 1;
    s.total++;
    return { kind: "ok" };
  }

  /** Running penalties, for stats. */
  penalties(now: number): { client: string; endpoint: string; until: number }[] {
    const out: { client: string; endpoint: string; until: number }[] = [];
    for (const [key, s] of this.states) {
      if (s.penaltyUntil > now) {
        const space = key.indexOf(" ");
        out.push({
          client: key.slice(0, space),
          endpoint: key.slice(space + 1),
          until: s.penaltyUntil,
        });
      }
    }
    return out;
  }

  /** Forgets the counted windows (after a settings change) but keeps running penalties. */
  clearWindows(): void {
    for (const s of this.states.values()) {
      s.counts.fill(0);
      s.total = 0;
      s.head = 0;
    }
  }

  reset(): void {
    this.states = new Map();
  }

  private advance(s: WindowState, bucket: number): void {
    if (bucket - s.head >= BUCKETS) {
      s.counts.fill(0);
      s.total = 0;
    } else {
      for (let b = s.head + 1; b <= bucket; b++) {
        const i = b % BUCKETS;
        s.total -= s.counts[i]!;
        s.counts[i] = 0;
      }
    }
    if (bucket > s.head) s.head = bucket;
  }
}
