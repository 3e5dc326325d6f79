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

/** The three forms RFC 9110 §5.6.7 allows for an HTTP date (IMF-fixdate, RFC 850, asctime). */
const HTTP_DATE = [
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  /^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \d{2}-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
];

/**
 * Retry-After as seconds: a non-negative integer (delta-seconds) or an HTTP date. Undefined when
 * absent or anything else (`-5`, `1.5`, `soon`, a date in another form), so the caller falls back
 * to its configured penalty: a malformed header never becomes "retry at once".
 *
 * @example
 *   parseRetryAfter("2") // 2
 *   parseRetryAfter("-5") // undefined (Date.parse would read it as the year 2001)
 *   parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", Date.parse("Wed, 21 Oct 2015 07:27:00 GMT")) // 60
 */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  if (!HTTP_DATE.some((form) => form.test(value))) return undefined;
  // asctime carries no zone; it is GMT all the same.
  const at = Date.parse(/GMT$/.test(value) ? value : `${value} GMT`);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** Cut short, and with control and bidi characters made visible: the text is the server's. */
function cut(s: string): string {
  const visible = escapeInvisible(s);
  return visible.length > MAX_DETAIL ? `${visible.slice(0, MAX_DETAIL)}…` : visible;
}
