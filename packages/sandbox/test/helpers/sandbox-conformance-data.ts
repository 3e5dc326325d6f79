/**
 * The records the conformance test reads through the validating proxy: quote executions, balances,
 * deposit addresses, an orchestration rule and orders of every shape (a MARKET order without a
 * price, a newer market, an expired GTT order), for two profiles.
 */
import type { Sandbox } from "../../src/index.ts";

const HOUR = 3_600_000;

export function seedConformanceData(sandbox: Sandbox, P1: string, P2: string): void {
  const now = Date.now();
  sandbox.seedQuoteExecutions({ profile_id: P1, count: 300, seed: 3 });
  sandbox.setBalances([
    { profile_id: P1, asset: "BTC", amount: "2" },
    { profile_id: P2, asset: "BTC", amount: "0" },
  ]);
  sandbox.seedDepositAddresses({ count: 200, seed: 2, profile_ids: [P1, P2] });
  sandbox.seedOrchestrationRules([
    {
      ref_id: "conf-rule-1",
      profile_id: P1,
      source_asset: "USDC",
      destination_asset: "USD",
      source: { crypto: { network: "ETHEREUM" } },
      destination: { profile: { profile_id: P2 } },
    },
  ]);
  sandbox.seedOrders([
    { profile_id: P1, side: "SELL", market: "ETHUSD", type: "MARKET", base_amount: "0.5" },
    { profile_id: P1, side: "BUY", market: "BTCUSD", type: "MARKET", quote_amount: "100" },
    {
      profile_id: P1,
      side: "BUY",
      market: "PEPEUSD",
      type: "LIMIT",
      price: "0.00001",
      base_amount: "1000000",
    },
    {
      profile_id: P1,
      side: "SELL",
      market: "AVAXUSD",
      type: "STOP_LIMIT",
      stop_price: "20",
      price: "19.5",
      base_amount: "3",
      time_in_force: "GTT",
      created_at: new Date(now - 2 * HOUR).toISOString(),
      expiration_date: new Date(now - HOUR).toISOString(),
    },
  ]);
}
