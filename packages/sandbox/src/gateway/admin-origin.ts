import type { FastifyReply, FastifyRequest } from "fastify";
import { ADMIN_PREFIX } from "../paths.ts";
import { sendProblem } from "./problem.ts";

/** A loopback host name or address: localhost (and *.localhost), 127.0.0.0/8, ::1. */
export function isLoopbackName(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const v4 = h.startsWith("::ffff:") ? h.slice(7) : h;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** The host part of a Host header: "127.0.0.1:8080" → "127.0.0.1", "[::1]:80" → "[::1]". */
function hostOf(header: string): string {
  if (header.startsWith("[")) return header.slice(0, header.indexOf("]") + 1);
  const colon = header.lastIndexOf(":");
  return colon < 0 ? header : header.slice(0, colon);
}

/**
 * Why an admin request must be refused, or undefined. The admin surface has no auth, so a web page
 * must not reach it: a Host that is not a loopback name is DNS rebinding (a hostile name resolved
 * to 127.0.0.1), and an Origin that is not loopback is a cross-site request (CSRF).
 *
 * @example
 *   adminRefusal("evil.example:8080", undefined); // "the admin surface answers only ..."
 */
export function adminRefusal(
  host: string | undefined,
  origin: string | undefined,
): string | undefined {
  if (host === undefined || !isLoopbackName(hostOf(host))) {
    return `the admin surface answers only requests addressed to a loopback host (localhost, 127.0.0.1, [::1]), not Host ${JSON.stringify((host ?? "").slice(0, 80))}`;
  }
  if (origin === undefined) return undefined;
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).hostname;
  } catch {
    originHost = undefined;
  }
  if (originHost === undefined || !isLoopbackName(originHost)) {
    return `the admin surface refuses cross-site requests: Origin ${JSON.stringify(origin.slice(0, 80))} is not a loopback origin`;
  }
  return undefined;
}

/** The `onRequest` hook that applies {@link adminRefusal} to every request under /__sandbox. */
export async function guardAdminOrigin(request: FastifyRequest, reply: FastifyReply) {
  if (!request.url.startsWith(ADMIN_PREFIX)) return;
  const refusal = adminRefusal(request.headers.host, request.headers.origin);
  if (refusal) return sendProblem(reply, 403, refusal);
}
