import type { FastifyPluginCallback } from "fastify";
import type { SandboxContext } from "../context.ts";
import { registerExchangeAdminRoutes } from "./exchange-admin-routes.ts";
import { registerExchangeRoutes } from "./exchange-routes.ts";

/** The exchange domain as one Fastify plugin: quote executions, orders, and their admin seeding. */
export const exchangePlugin =
  (ctx: SandboxContext): FastifyPluginCallback =>
  (app, _opts, done) => {
    registerExchangeRoutes(app, ctx);
    registerExchangeAdminRoutes(app, ctx);
    done();
  };
