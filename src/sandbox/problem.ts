import type { FastifyReply } from "fastify";

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

/** The platform's error body (RFC 9457), as in the reference schema's examples. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
}

export function problemBody(status: number, detail: string): Problem {
  return { type: "about:blank", title: TITLES[status] ?? "Error", status, detail };
}

/**
 * Sends an `application/problem+json` answer whose `detail` says exactly what was wrong.
 *
 * @example
 *   return sendProblem(reply, 400, "limit must be an integer between 1 and 1000, got 5000");
 */
export function sendProblem(
  reply: FastifyReply,
  status: number,
  detail: string,
  headers?: Record<string, string>,
): FastifyReply {
  if (headers) reply.headers(headers);
  return reply
    .code(status)
    .type("application/problem+json")
    .send(JSON.stringify(problemBody(status, detail)));
}

/** Thrown by request parsing helpers; the route's caller turns it into a problem answer. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}
