import type { SandboxContext } from "../context.ts";
import type { SandboxStats } from "../types.ts";

/** Everything the stats surface reports, read from the context without scanning any store. */
export function collectStats(ctx: SandboxContext): SandboxStats {
  const now = Date.now();
  const mem = process.memoryUsage();
  return {
    startedAt: ctx.startedAt,
    identities: ctx.identities.identityCount,
    controls: ctx.identities.controlCounts,
    ...ctx.stats.snapshot(),
    tokensIssued: ctx.issuer.issued,
    penalised: [...ctx.apiLimiter.penalties(now), ...ctx.tokenLimiter.penalties(now)].map((p) => ({
      client: p.client,
      endpoint: p.endpoint,
      until: new Date(p.until).toISOString(),
    })),
    faults: { ...ctx.faults.counts, revocations: ctx.issuer.revocations },
    writes: { ...ctx.writes },
    records: {
      profiles: ctx.profiles.size,
      quoteExecutions: ctx.exchange.executionCount,
      orders: ctx.exchange.orderCount,
      transfers: ctx.transfers.transferCount,
      depositAddresses: ctx.addresses.size,
      orchestrationRules: ctx.rules.counts,
    },
    integrity: ctx.identities.integritySnapshot(),
    autoMigrate: { ...ctx.autoMigrate },
    memory: { rssBytes: mem.rss, heapUsedBytes: mem.heapUsed },
  };
}
