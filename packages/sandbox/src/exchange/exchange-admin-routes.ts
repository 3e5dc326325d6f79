import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { requestBody } from "../input/body-fields.ts";
import { itemsField, seeding } from "../input/seed-input.ts";
import { ADMIN_PREFIX } from "../paths.ts";
import { exchangeApi } from "./exchange-api.ts";

/**
 * Admin seeding of the exchange, the twins of {@link exchangeApi}:
 * `POST /__sandbox/quote-executions` `{items}` or `{profile_id, count, seed?}`, and
 * `POST /__sandbox/orders` `{items}` → `{items: [{order, rejection_reason?}]}`.
 */
export function registerExchangeAdminRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const api = exchangeApi(ctx);
  const big = { bodyLimit: 64 * 1024 * 1024 };

  app.post(`${ADMIN_PREFIX}/quote-executions`, big, async (request) => {
    const b = requestBody(request.body, "{items} or {profile_id, count, seed?}");
    if ("count" in b) {
      return { count: seeding(() => api.seedQuoteExecutions(b as never)).length };
    }
    const items = seeding(() => api.seedQuoteExecutions(itemsField(b, "quote executions")));
    return { count: items.length, items };
  });

  app.post(`${ADMIN_PREFIX}/orders`, big, async (request) => ({
    items: seeding(() => api.seedOrders(itemsField(request.body, "orders"))),
  }));
}
