import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { requestBody } from "../input/body-fields.ts";
import { itemsField, seeding } from "../input/seed-input.ts";
import { ADMIN_PREFIX } from "../paths.ts";
import { depositAddressApi } from "./deposit-address-api.ts";

/**
 * Admin seeding of deposit addresses, the twin of {@link depositAddressApi}:
 * `POST /__sandbox/deposit-addresses` `{items}` or `{count, seed?, profile_ids?, identity_ids?}`.
 */
export function registerDepositAddressAdminRoutes(app: FastifyInstance, ctx: SandboxContext) {
  const api = depositAddressApi(ctx);
  app.post(
    `${ADMIN_PREFIX}/deposit-addresses`,
    { bodyLimit: 64 * 1024 * 1024 },
    async (request) => {
      const b = requestBody(request.body, "{items} or {count, seed?, profile_ids?, identity_ids?}");
      if ("count" in b) {
        return { count: seeding(() => api.seedDepositAddresses(b as never)).length };
      }
      const items = seeding(() => api.seedDepositAddresses(itemsField(b, "deposit addresses")));
      return { count: items.length, items };
    },
  );
}
