/**
 * One HTTP exchange of the platform client, and the small pieces around it: the URL, the JSON
 * body. No retries here; `http-client.ts` decides what to do with the outcome.
 */

import { request } from "undici";
import { MAX_RESPONSE_BYTES, readBounded } from "./bounded-body.ts";
import { LinkedSignal } from "./linked-signal.ts";
import { describeFetchFailure, type FetchFailure, type HttpMethod } from "./platform-error.ts";
import { watchSend } from "./send-watch.ts";

/** What came back: an answer (any status), or why there was none. */
export type Outcome =
  | {
      readonly status: number;
      readonly text: string;
      readonly retryAfter: string | null;
      readonly location: string | null;
    }
  | { readonly status: number; readonly tooLarge: TooLarge }
  | { readonly failure: FetchFailure };

type TooLarge = { readonly bytes: number; readonly declared: number | undefined };

/**
 * Sends one request with the bearer token, within `timeoutMs`, never following a redirect (it
 * would carry the token to wherever it points), reading at most `MAX_RESPONSE_BYTES` of the body.
 * Never throws: a failure is an outcome.
 * `onSent` is called once, when the request is written to its socket (see `send-watch.ts`), or
 * at the end of the exchange if it never was.
 *
 * @example
 *   const o = await exchange(url, "GET", token, undefined, 30_000, signal, histogram);
 */
export async function exchange(
  url: string,
  method: HttpMethod,
  token: string,
  body: string | undefined,
  timeoutMs: number,
  signal: AbortSignal,
  latency: { record(ms: number): void },
  onSent: () => void = () => {},
): Promise<Outcome> {
  const link = new LinkedSignal([signal], timeoutMs);
  const started = performance.now();
  const sent = watchSend(method, url, onSent);
  try {
    // undici's own request API, not fetch: the same client under both, without the WHATWG
    // streams fetch wraps the body in (a third of the CPU of reading a 1000-identity page).
    // It never follows a redirect, which would carry the token to wherever it points.
    const res = await request(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: "application/json, application/problem+json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body,
      signal: link.signal,
    });
    const read = await readBounded(res.body, res.headers["content-length"], MAX_RESPONSE_BYTES);
    latency.record(performance.now() - started);
    if ("tooLarge" in read) return { status: res.statusCode, tooLarge: read.tooLarge };
    return {
      status: res.statusCode,
      text: read.text,
      retryAfter: header(res.headers["retry-after"]),
      location: header(res.headers.location),
    };
  } catch (err) {
    return {
      failure: describeFetchFailure(err, { timedOut: link.timedOut, cancelled: link.cancelled }),
    };
  } finally {
    sent();
    link.dispose();
  }
}

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? null;

/**
 * The body as JSON; an empty body is `{}` (the delete endpoint answers with nothing).
 *
 * @example
 *   readJson('{"items":[]}') // { ok: true, value: { items: [] } }
 */
export function readJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === "") return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * The API base URL, the concrete path and the defined query parameters.
 *
 * @example
 *   buildUrl("https://api", { path: "/v2/identity/controls", query: { identity_id: "x" } })
 */
export function buildUrl(
  apiUrl: string,
  spec: {
    readonly path: string;
    /** An array value repeats the parameter (`control_types=A&control_types=B`), as the schema's explode form asks. */
    readonly query?: Record<string, string | readonly string[] | undefined>;
  },
): string {
  let url = apiUrl + spec.path;
  if (spec.query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(spec.query)) {
      if (typeof v === "string") q.set(k, v);
      else if (v !== undefined) for (const item of v) q.append(k, item);
    }
    const s = q.toString();
    if (s) url += `?${s}`;
  }
  return url;
}
