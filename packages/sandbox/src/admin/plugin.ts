import type { FastifyPluginCallback } from "fastify";
import type { SandboxContext } from "../context.ts";
import { registerAdminRoutes } from "./admin-routes.ts";

/** The sandbox-wide admin routes as one Fastify plugin (each domain registers its own seeding). */
export const adminPlugin =
  (ctx: SandboxContext): FastifyPluginCallback =>
  (app, _opts, done) => {
    registerAdminRoutes(app, ctx);
    done();
  };
