import type { FastifyPluginCallback } from "fastify";
import type { SandboxContext } from "../context.ts";
import { registerOrchestrationAdminRoutes } from "./orchestration-admin-routes.ts";
import { registerOrchestrationRoutes } from "./orchestration-routes.ts";

/** The orchestration domain as one Fastify plugin: rule deletes and their admin seeding. */
export const orchestrationPlugin =
  (ctx: SandboxContext): FastifyPluginCallback =>
  (app, _opts, done) => {
    registerOrchestrationRoutes(app, ctx);
    registerOrchestrationAdminRoutes(app, ctx);
    done();
  };
