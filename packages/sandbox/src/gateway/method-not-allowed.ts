import type { FastifyInstance, FastifyPluginCallback, HTTPMethods } from "fastify";
import { sendProblem } from "./problem.ts";

const METHODS: readonly HTTPMethods[] = ["GET", "POST", "PUT", "DELETE", "PATCH"];

/**
 * The one 405 table. Call on the root instance before the domain plugins register: every platform
 * route (one with an `endpoint`) is recorded with its methods. Register the returned plugin after
 * them: every other method on those paths then answers 405, not the catch-all 404.
 *
 * @example
 *   const methodNotAllowed = recordAllowedMethods(app);
 *   app.register(identityPlugin(ctx));
 *   app.register(methodNotAllowed);
 */
export function recordAllowedMethods(app: FastifyInstance): FastifyPluginCallback {
  const allowed = new Map<string, Set<string>>();
  app.addHook("onRoute", (route) => {
    if (route.config?.endpoint === undefined) return;
    const set = allowed.get(route.url) ?? new Set<string>();
    for (const m of [route.method].flat()) set.add(m);
    allowed.set(route.url, set);
  });
  return (child, _opts, done) => {
    for (const [url, methods] of allowed) {
      const others = METHODS.filter((m) => !methods.has(m));
      if (others.length === 0) continue;
      child.route({
        method: others,
        url,
        handler: async (request, reply) =>
          sendProblem(reply, 405, `${request.method} is not allowed on ${url}`),
      });
    }
    done();
  };
}
