/**
 * One HTTP exchange of the platform client, and the small pieces around it: the URL, the JSON
 * body. No retries here; `http-client.ts` decides what to do with the outcome.
 */

import { request } from "undici";
import { LinkedSignal } from "./linked-signal.ts";
import { describeFetchFailure, type FetchFailure, type HttpMethod } from "./platform-error.ts";
import { watchSend } from "./send-watch.ts";

/** What came back: an answer (any status), or why there was none. */
export type Outcome =
  | { readonly status: number; readonly text: string; readonly retryAfter: string | null }
  | { readonly failure: FetchFailure };

/**
 * Sends one request with the bearer token, within `timeoutMs`, never following a redirect (it
 * would carry the token to wherever it points). Never throws: a failure is an outcome.
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
    const chunks: Buffer[] = [];
    for await (const chunk of res.body) chunks.push(chunk as Buffer);
    const text =
      chunks.length === 1 ? (chunks[0] as Buffer).toString() : Buffer.concat(chunks).toString();
    latency.record(performance.now() - started);
    const retryAfter = res.headers["retry-after"];
    return {
      status: res.statusCode,
      text,
      retryAfter: (Array.isArray(retryAfter) ? retryAfter[0] : retryAfter) ?? null,
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
