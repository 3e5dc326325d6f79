import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { ProblemError } from "../gateway/problem.ts";
import { requestBody } from "../input/body-fields.ts";
import { optionalParam, type Query } from "../input/query-params.ts";
import { itemsField, seeding } from "../input/seed-input.ts";
import { ADMIN_PREFIX } from "../paths.ts";
import { transferApi } from "./transfer-api.ts";

/**
 * Admin routes of the transfer domain, the twins of {@link transferApi}:
 * `POST|GET /__sandbox/balances`, `PUT /__sandbox/transfer-fees`, `GET /__sandbox/transfers`.
 */
export function registerTransferAdminRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const api = transferApi(ctx);

  app.post(`${ADMIN_PREFIX}/balances`, { bodyLimit: 64 * 1024 * 1024 }, async (request) => ({
    items: seeding(() => api.setBalances(itemsField(request.body, "{profile_id, asset, amount}"))),
  }));

  app.get(`${ADMIN_PREFIX}/balances`, async (request) => {
    const profileId = optionalParam(request.query as Query, "profile_id");
    if (profileId === undefined)
      throw new ProblemError(400, "the query parameter profile_id is required");
    return { items: api.balancesOf(profileId) };
  });

  app.put(`${ADMIN_PREFIX}/transfer-fees`, async (request) => {
    const fees = requestBody(request.body, '{"BTC": "0.0001", ...}');
    seeding(() => api.setTransferFees(fees as Record<string, string>));
    return {};
  });

  app.get(`${ADMIN_PREFIX}/transfers`, async (request) => {
    const q = request.query as Query;
    return {
      items: api.transfers({
        profileId: optionalParam(q, "profile_id"),
        groupId: optionalParam(q, "group_id"),
      }),
    };
  });
}
