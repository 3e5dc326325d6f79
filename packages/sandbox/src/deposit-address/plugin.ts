import type { FastifyPluginCallback } from "fastify";
import type { SandboxContext } from "../context.ts";
import { registerDepositAddressAdminRoutes } from "./deposit-address-admin-routes.ts";
import { registerDepositAddressRoutes } from "./deposit-address-routes.ts";

/** The deposit-address domain as one Fastify plugin: the listing and its admin seeding. */
export const depositAddressPlugin =
  (ctx: SandboxContext): FastifyPluginCallback =>
  (app, _opts, done) => {
    registerDepositAddressRoutes(app, ctx);
    registerDepositAddressAdminRoutes(app, ctx);
    done();
  };
