import Fastify, { type FastifyError, type FastifyInstance } from "fastify";
import { adminPlugin } from "./admin/plugin.ts";
import type { SandboxContext } from "./context.ts";
import { depositAddressPlugin } from "./deposit-address/plugin.ts";
import { exchangePlugin } from "./exchange/plugin.ts";
import { guardAdminOrigin } from "./gateway/admin-origin.ts";
import { recordAllowedMethods } from "./gateway/method-not-allowed.ts";
import { ProblemError, sendProblem } from "./gateway/problem.ts";
import { createRequestGuard, routeKey } from "./gateway/request-guard.ts";
import { identityPlugin } from "./identity/plugin.ts";
import { createValidatorCompiler, formatSchemaError } from "./input/schema-validation.ts";
import { oauthPlugin } from "./oauth/plugin.ts";
import { orchestrationPlugin } from "./orchestration/plugin.ts";
import { TOKEN_PATH } from "./paths.ts";
import { MAX_IDENTITY_ID_LENGTH } from "./shared.ts";
import { transferPlugin } from "./transfer/plugin.ts";

/**
 * The Fastify app of one sandbox: the parsers, the gateway's hooks, the problem+json error and
 * not-found answers, then one plugin per domain, the admin controls and the 405 table. Routes
 * reach the state only through `ctx`.
 *
 * @example
 *   const app = buildApp(ctx);
 *   await app.listen({ host: "127.0.0.1", port: 0 });
 */
export function buildApp(ctx: SandboxContext): FastifyInstance {
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    return503OnClosing: false,
    bodyLimit: 1024 * 1024,
    // Path parameters carry identity ids of up to 256 characters, percent-encoded up to 3 bytes each.
    routerOptions: { maxParamLength: 3 * MAX_IDENTITY_ID_LENGTH },
    schemaErrorFormatter: (errors, dataVar) =>
      new ProblemError(400, formatSchemaError(errors as never, dataVar)),
  });
  app.setValidatorCompiler(createValidatorCompiler());
  // Only JSON (the API) and forms (the token endpoint); anything else is a 415. Our own JSON
  // parser allows an empty body (a DELETE sent with a JSON content type) and says what is wrong
  // with a malformed one.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === "") return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(
        new ProblemError(400, `the body is not valid JSON: ${(err as Error).message}`),
        undefined,
      );
    }
  });
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string" },
    (_req, body, done) => done(null, new URLSearchParams(body as string)),
  );
  app.addHook("onRequest", guardAdminOrigin);
  app.addHook("onRequest", createRequestGuard(ctx));
  app.addHook("onResponse", async (request, reply) => {
    ctx.stats.status(routeKey(request), reply.statusCode);
  });
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ProblemError) {
      return sendProblem(reply, err.status, err.detail, undefined, err.kind, err.meta);
    }
    const status =
      err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (request.routeOptions.url === TOKEN_PATH && status < 500) {
      return reply.code(400).send({ error: "invalid_request", error_description: err.message });
    }
    return sendProblem(
      reply,
      status,
      status === 500 ? `internal sandbox error: ${err.message}` : err.message,
    );
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    return sendProblem(reply, 404, `no route ${request.method} ${path.slice(0, 200)}`);
  });
  const methodNotAllowed = recordAllowedMethods(app);
  app.register(oauthPlugin(ctx));
  app.register(identityPlugin(ctx));
  app.register(exchangePlugin(ctx));
  app.register(transferPlugin(ctx));
  app.register(depositAddressPlugin(ctx));
  app.register(orchestrationPlugin(ctx));
  app.register(adminPlugin(ctx));
  app.register(methodNotAllowed);
  return app;
}
