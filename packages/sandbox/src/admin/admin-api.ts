import type { SandboxContext } from "../context.ts";
import { normalizeEndpointRates } from "../gateway/endpoint-limits.ts";
import { stripUndefined } from "../gateway/faults.ts";
import { checkLimits } from "../options.ts";
import type { AdminApi } from "../types.ts";
import { collectStats } from "./stats.ts";

/**
 * The sandbox-wide controls over a context: faults, limits, token revocation, reset, stats and
 * request windows. The programmatic handle and the admin routes both call it.
 *
 * @example
 *   adminApi(ctx).setFaults({ failRate: 0.1 });
 */
export function adminApi(ctx: SandboxContext): AdminApi {
  const { limits } = ctx;
  return {
    setFaults: (f) => ctx.faults.set(f),
    setLimits(l) {
      checkLimits(l);
      Object.assign(limits, stripUndefined(l));
      if (l.endpointRateLimits !== undefined) {
        limits.endpointRateLimits = normalizeEndpointRates(l.endpointRateLimits);
      }
      if (l.tokenTtlS !== undefined) ctx.issuer.ttlS = l.tokenTtlS;
      if (
        l.endpointRateLimits !== undefined ||
        l.rateLimitRps !== undefined ||
        l.tokenRateLimitRps !== undefined ||
        l.rateWindowS !== undefined
      ) {
        ctx.apiLimiter.clearWindows();
        ctx.tokenLimiter.clearWindows();
      }
    },
    revokeTokens: () => ctx.issuer.revokeAll(),
    reset() {
      ctx.identities.reset();
      ctx.exchange.reset();
      ctx.transfers.reset();
      ctx.addresses.reset();
      ctx.rules.reset();
      ctx.profiles.clear();
      ctx.stats.reset();
      ctx.issuer.reset();
      ctx.apiLimiter.reset();
      ctx.tokenLimiter.reset();
      ctx.faults.resetCounts();
      ctx.writes.creates = 0;
      ctx.writes.deletes = 0;
    },
    stats: () => collectStats(ctx),
    requestsIn: (w) => ctx.stats.window(w),
  };
}
