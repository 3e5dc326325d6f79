/** Reading error bodies and Retry-After headers, whatever shape the server chose. */
import { escapeInvisible } from "../visible-text.ts";

export interface ProblemDetails {
  readonly type?: string;
  readonly title?: string;
  readonly detail: string;
}

const MAX_DETAIL = 500;

/**
 * Reads an error body: RFC 9457 problem+json `{type,title,status,detail}`, an OAuth error
 * `{error, error_description}`, or any text (cut short). Never throws.
 *
 * @example
 *   parseProblem('{"title":"Not Found","status":404,"detail":"identity not found"}')
 *   // { title: "Not Found", detail: "identity not found", type: undefined }
 */
export function parseProblem(text: string, statusText = ""): ProblemDetails {
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (body && typeof body === "object" && !Array.isArray(body)) {
    const o = body as Record<string, unknown>;
    const raw = str(o.title) ?? str(o.error);
    const title = raw === undefined ? undefined : cut(raw);
    const detail = str(o.detail) ?? str(o.error_description) ?? str(o.message);
    return {
      type: str(o.type),
      title,
      detail: cut(detail ?? title ?? (statusText || "no detail given")),
    };
  }
  const plain = text.trim();
  return { title: statusText || undefined, detail: cut(plain || statusText || "no detail given") };
}

/** OAuth token endpoints answer `{error: "invalid_scope", ...}`; returns that code if present. */
export function oauthErrorCode(text: string): string | undefined {
  try {
    const o = JSON.parse(text) as Record<string, unknown>;
    return str(o?.error);
  } catch {
    return undefined;
  }
}

/**
 * Retry-After as seconds: either delta-seconds or an HTTP date. Undefined when absent or
 * unreadable, so the caller falls back to its configured penalty.
 *
 * @example
 *   parseRetryAfter("2") // 2
 *   parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", Date.parse("Wed, 21 Oct 2015 07:27:00 GMT")) // 60
 */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, (at - now) / 1000);
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** Cut short, and with control and bidi characters made visible: the text is the server's. */
function cut(s: string): string {
  const visible = escapeInvisible(s);
  return visible.length > MAX_DETAIL ? `${visible.slice(0, MAX_DETAIL)}…` : visible;
}
