import type { FastifyReply, FastifyRequest } from "fastify";
import type { SandboxContext } from "../context.ts";
import { routeKey } from "./request-guard.ts";

/**
 * Commits a write, then, if the ambiguous-write fault strikes, drops the connection before any
 * answer: the client cannot tell whether the write happened, exactly the case it must verify.
 */
export function answerWrite(
  ctx: SandboxContext,
  request: FastifyRequest,
  reply: FastifyReply,
  body: unknown,
) {
  if (ctx.faults.drawAmbiguous()) {
    reply.hijack();
    ctx.stats.status(routeKey(request), "dropped");
    request.raw.socket.destroy();
    return;
  }
  return reply.send(body);
}
