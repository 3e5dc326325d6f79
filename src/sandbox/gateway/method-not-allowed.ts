import type { FastifyInstance, HTTPMethods } from "fastify";
import { sendProblem } from "./problem.ts";

const METHODS: readonly HTTPMethods[] = ["GET", "POST", "PUT", "DELETE", "PATCH"];

/**
 * The one 405 table: every platform route (one with an `endpoint`) registered through `register`
 * is recorded with its method, and every other method on the same path answers 405, not the
 * catch-all 404.
 *
 * @example
 *   answerMethodNotAllowed(app, () => { registerIdentityRoutes(app, ctx); ... });
 */
export function answerMethodNotAllowed(app: FastifyInstance, register: () => void): void {
  const allowed = new Map<string, Set<string>>();
  app.addHook("onRoute", (route) => {
    if (route.config?.endpoint === undefined) return;
    const set = allowed.get(route.url) ?? new Set<string>();
    for (const m of [route.method].flat()) set.add(m);
    allowed.set(route.url, set);
  });
  register();
  for (const [url, methods] of allowed) {
    const others = METHODS.filter((m) => !methods.has(m));
    if (others.length === 0) continue;
    app.route({
      method: others,
      url,
      handler: async (request, reply) =>
        sendProblem(reply, 405, `${request.method} is not allowed on ${url}`),
    });
  }
}
