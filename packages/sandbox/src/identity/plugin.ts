import type { FastifyPluginCallback } from "fastify";
import type { SandboxContext } from "../context.ts";
import { registerControlRoutes } from "./control-routes.ts";
import { registerIdentityAdminRoutes } from "./identity-admin-routes.ts";
import { registerIdentityRoutes } from "./identity-routes.ts";

/** The identity domain as one Fastify plugin: identities, controls, and their admin seeding. */
export const identityPlugin =
  (ctx: SandboxContext): FastifyPluginCallback =>
  (app, _opts, done) => {
    registerControlRoutes(app, ctx);
    registerIdentityRoutes(app, ctx);
    registerIdentityAdminRoutes(app, ctx);
    done();
  };
