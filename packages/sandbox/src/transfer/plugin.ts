import type { FastifyPluginCallback } from "fastify";
import type { SandboxContext } from "../context.ts";
import { registerTransferAdminRoutes } from "./transfer-admin-routes.ts";
import { registerTransferRoutes } from "./transfer-routes.ts";

/** The transfer domain as one Fastify plugin: internal transfers, balances and fees. */
export const transferPlugin =
  (ctx: SandboxContext): FastifyPluginCallback =>
  (app, _opts, done) => {
    registerTransferRoutes(app, ctx);
    registerTransferAdminRoutes(app, ctx);
    done();
  };
