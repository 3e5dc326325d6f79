import type { FastifyInstance } from "fastify";
import { ADMIN_PREFIX } from "./context.ts";
import { SeedConflictError } from "./ext-types.ts";
import { ProblemError } from "./gateway/problem.ts";
import { requestBody } from "./input/body-fields.ts";
import { optionalParam, type Query } from "./input/query-params.ts";
import type { Sandbox } from "./types.ts";

/** Runs a seeding call: its RangeError is a 400, its SeedConflictError a 409. */
function seeding<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RangeError) throw new ProblemError(400, err.message);
    if (err instanceof SeedConflictError) throw new ProblemError(409, err.message);
    throw err;
  }
}

const bodyOf = requestBody;

function itemsOf(body: unknown, what: string): unknown[] {
  const b = bodyOf(body, `{items: [${what}, ...]}`);
  if (!Array.isArray(b.items)) throw new ProblemError(400, `items must be an array of ${what}`);
  return b.items;
}

/**
 * Admin seeding of the rest of the interface (no auth, no limits, no faults), one route per
 * resource, each the twin of a `Sandbox` method:
 *
 * - `POST /__sandbox/quote-executions` `{items}` or `{profile_id, count, seed?}` (synthetic)
 * - `POST /__sandbox/orders` `{items}` → `{items: [{order, rejection_reason?}]}`
 * - `POST /__sandbox/balances` `{items: [{profile_id, asset, amount}]}`; `GET ...?profile_id=`
 * - `PUT /__sandbox/transfer-fees` `{ASSET: "fee", ...}`; `GET /__sandbox/transfers?profile_id=&group_id=`
 * - `POST /__sandbox/deposit-addresses` `{items}` or `{count, seed?, profile_ids?, identity_ids?}`
 * - `POST /__sandbox/orchestration-rules` `{items}`; `GET /__sandbox/orchestration-rules`
 *
 * A refused seed (400 invalid, 409 conflicting) stores nothing.
 *
 * @example
 *   registerExtAdminRoutes(app, sandbox);
 */
export function registerExtAdminRoutes(app: FastifyInstance, sandbox: Sandbox): void {
  const big = { bodyLimit: 64 * 1024 * 1024 };

  app.post(`${ADMIN_PREFIX}/quote-executions`, big, async (request) => {
    const b = bodyOf(request.body, "{items} or {profile_id, count, seed?}");
    if ("count" in b) {
      const seeded = seeding(() => sandbox.seedQuoteExecutions(b as never));
      return { count: seeded.length };
    }
    const items = seeding(() =>
      sandbox.seedQuoteExecutions(itemsOf(b, "quote executions") as never),
    );
    return { count: items.length, items };
  });

  app.post(`${ADMIN_PREFIX}/orders`, big, async (request) => ({
    items: seeding(() => sandbox.seedOrders(itemsOf(request.body, "orders") as never)),
  }));

  app.post(`${ADMIN_PREFIX}/balances`, big, async (request) => ({
    items: seeding(() =>
      sandbox.setBalances(itemsOf(request.body, "{profile_id, asset, amount}") as never),
    ),
  }));

  app.get(`${ADMIN_PREFIX}/balances`, async (request) => {
    const profileId = optionalParam(request.query as Query, "profile_id");
    if (profileId === undefined)
      throw new ProblemError(400, "the query parameter profile_id is required");
    return { items: sandbox.balancesOf(profileId) };
  });

  app.put(`${ADMIN_PREFIX}/transfer-fees`, async (request) => {
    const fees = bodyOf(request.body, '{"BTC": "0.0001", ...}');
    seeding(() => sandbox.setTransferFees(fees as Record<string, string>));
    return {};
  });

  app.get(`${ADMIN_PREFIX}/transfers`, async (request) => {
    const q = request.query as Query;
    return {
      items: sandbox.transfers({
        profileId: optionalParam(q, "profile_id"),
        groupId: optionalParam(q, "group_id"),
      }),
    };
  });

  app.post(`${ADMIN_PREFIX}/deposit-addresses`, big, async (request) => {
    const b = bodyOf(request.body, "{items} or {count, seed?, profile_ids?, identity_ids?}");
    if ("count" in b) {
      const seeded = seeding(() => sandbox.seedDepositAddresses(b as never));
      return { count: seeded.length };
    }
    const items = seeding(() =>
      sandbox.seedDepositAddresses(itemsOf(b, "deposit addresses") as never),
    );
    return { count: items.length, items };
  });

  app.post(`${ADMIN_PREFIX}/orchestration-rules`, big, async (request) => {
    const items = seeding(() =>
      sandbox.seedOrchestrationRules(itemsOf(request.body, "orchestration rules") as never),
    );
    return { count: items.length, items };
  });

  app.get(`${ADMIN_PREFIX}/orchestration-rules`, async () => ({
    items: sandbox.orchestrationRules(),
  }));
}
