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

/** The platform's error body (RFC 9457), as in the published schema's Problem. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** Structured facts about the error (insufficient funds: profile, asset, available, needed). */
  meta?: Record<string, string>;
}

/** A problem type other than about:blank, with its title; taken from the published schema's examples. */
export interface ProblemKind {
  type: string;
  title: string;
}

export const INSUFFICIENT_FUNDS: ProblemKind = Object.freeze({
  type: "https://developer.SERVICE.example/docs/v2/problems/insufficient-funds",
  title: "Insufficient Funds",
});
export const ALREADY_EXISTS: ProblemKind = Object.freeze({
  type: "https://api.SERVICE.example/v2/problems/already-exists",
  title: "Already exists",
});

export function problemBody(
  status: number,
  detail: string,
  kind?: ProblemKind,
  meta?: Record<string, string>,
): Problem {
  const body: Problem = {
    type: kind?.type ?? "about:blank",
    title: kind?.title ?? TITLES[status] ?? "Error",
    status,
    detail,
  };
  if (meta) body.meta = meta;
  return body;
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
  kind?: ProblemKind,
  meta?: Record<string, string>,
): FastifyReply {
  if (headers) reply.headers(headers);
  return reply
    .code(status)
    .type("application/problem+json")
    .send(JSON.stringify(problemBody(status, detail, kind, meta)));
}

/** Thrown by request parsing helpers; the route's caller turns it into a problem answer. */
export class ProblemError extends Error {
  readonly status: number;
  readonly detail: string;
  readonly kind: ProblemKind | undefined;
  readonly meta: Record<string, string> | undefined;

  constructor(status: number, detail: string, kind?: ProblemKind, meta?: Record<string, string>) {
    super(detail);
    this.status = status;
    this.detail = detail;
    this.kind = kind;
    this.meta = meta;
  }
}
