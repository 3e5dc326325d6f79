import type { FastifyPluginCallback } from "fastify";
import type { SandboxContext } from "../context.ts";
import { registerTokenRoute } from "./token-route.ts";

/** OAuth2 as one Fastify plugin: the token endpoint (the issuer lives in the context). */
export const oauthPlugin =
  (ctx: SandboxContext): FastifyPluginCallback =>
  (app, _opts, done) => {
    registerTokenRoute(app, ctx);
    done();
  };
