import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { SandboxContext } from "../context.ts";
import { TOKEN_PATH } from "../paths.ts";
import { effectiveRps } from "./endpoint-limits.ts";
import { sendProblem } from "./problem.ts";
import { Outcome } from "./request-stats.ts";

export function routeKey(request: FastifyRequest): string {
  return `${request.method} ${request.routeOptions.url ?? "(no route)"}`;
}

/**
 * Leaves the request unanswered until the client gives up or the sandbox closes. The socket is
 * kept so that `close()` can destroy it and the process can exit.
 */
export function hang(ctx: SandboxContext, request: FastifyRequest, reply: FastifyReply): void {
  reply.hijack();
  ctx.stats.status(routeKey(request), "hang");
  const socket = request.raw.socket;
  ctx.hanging.add(socket);
  socket.once("close", () => ctx.hanging.delete(socket));
}

/**
 * The `onRequest` hook of every platform route, in the order a gateway would apply them: rate
 * limit (per client address and endpoint path), then injected faults (latency, hang, 5xx), then
 * the bearer token and its scope. Admin and unknown routes carry no `endpoint` and pass untouched.
 */
export function createRequestGuard(ctx: SandboxContext) {
  return async function guard(request: FastifyRequest, reply: FastifyReply) {
    const cfg = request.routeOptions.config;
    const endpoint = cfg?.endpoint;
    if (endpoint === undefined) return;
    const now = Date.now();
    const limiter = endpoint === TOKEN_PATH ? ctx.tokenLimiter : ctx.apiLimiter;
    const decision = limiter.check(request.ip, endpoint, now);
    if (decision.kind !== "ok") {
      const penalty = decision.kind === "penalty";
      ctx.stats.outcome(endpoint, penalty ? Outcome.penalty : Outcome.limited, now);
      return sendProblem(
        reply,
        429,
        penalty
          ? `rate limit penalty running for ${endpoint} from ${request.ip}: retry after ${decision.retryAfterS} s`
          : `rate limit exceeded for ${endpoint}: over ${limitText(ctx, endpoint)}; every request from ${request.ip} to this endpoint is refused for ${ctx.limits.penaltyS} s`,
        { "retry-after": String(decision.retryAfterS) },
      );
    }
    ctx.stats.outcome(endpoint, Outcome.served, now);

    if (ctx.faults.active) {
      const ms = ctx.faults.drawLatency();
      if (ms > 0) await sleep(ms, undefined, { ref: false });
      if (ctx.faults.drawHang()) return hang(ctx, request, reply);
      const status = ctx.faults.drawFail();
      if (status !== undefined) {
        return sendProblem(reply, status, `injected fault: ${status} answered, nothing committed`);
      }
    }

    if (cfg?.scope === undefined) return;
    const auth = ctx.issuer.verify(request.headers.authorization);
    if (!auth.ok) {
      return sendProblem(reply, 401, auth.detail, {
        "www-authenticate": 'Bearer error="invalid_token"',
      });
    }
    if (!auth.token.scopes.has(cfg.scope)) {
      return sendProblem(
        reply,
        403,
        `the token lacks the scope ${cfg.scope} required for ${request.method} ${endpoint}`,
        { "www-authenticate": `Bearer error="insufficient_scope", scope="${cfg.scope}"` },
      );
    }
  };
}

function limitText(ctx: SandboxContext, endpoint: string): string {
  const rps =
    endpoint === TOKEN_PATH ? ctx.limits.tokenRateLimitRps : effectiveRps(ctx.limits, endpoint);
  return `${rps} requests/s averaged over ${ctx.limits.rateWindowS} s`;
}
