import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { itemsField, seeding } from "../input/seed-input.ts";
import { ADMIN_PREFIX } from "../paths.ts";
import { orchestrationApi } from "./orchestration-api.ts";

/**
 * Admin routes of orchestration rules, the twins of {@link orchestrationApi}:
 * `POST /__sandbox/orchestration-rules` `{items}` and `GET /__sandbox/orchestration-rules`.
 */
export function registerOrchestrationAdminRoutes(app: FastifyInstance, ctx: SandboxContext) {
  const api = orchestrationApi(ctx);
  app.post(
    `${ADMIN_PREFIX}/orchestration-rules`,
    { bodyLimit: 64 * 1024 * 1024 },
    async (request) => {
      const items = seeding(() =>
        api.seedOrchestrationRules(itemsField(request.body, "orchestration rules")),
      );
      return { count: items.length, items };
    },
  );
  app.get(`${ADMIN_PREFIX}/orchestration-rules`, async () => ({
    items: api.orchestrationRules(),
  }));
}
