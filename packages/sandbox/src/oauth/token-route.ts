import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { TOKEN_PATH } from "../paths.ts";

/**
 * `POST /oauth2/token`: the client-credentials grant, answered in OAuth2's own form (RFC 6749
 * §5.1/§5.2, not problem+json). Rate-limited like the platform's (1 rps by default), never faulted
 * by auth.
 *
 * @example
 *   registerTokenRoute(app, ctx);
 */
export function registerTokenRoute(app: FastifyInstance, ctx: SandboxContext): void {
  app.post(TOKEN_PATH, { config: { endpoint: TOKEN_PATH } }, async (request, reply) => {
    const form = request.body instanceof URLSearchParams ? request.body : undefined;
    const res = ctx.issuer.issue(request.headers.authorization, form);
    return reply.code(res.status).headers(res.headers).send(res.body);
  });
}
