/**
 * Small real-HTTP helpers for the sandbox tests: get a token, call an endpoint, read the answer.
 * Plain fetch over loopback; nothing is mocked.
 *
 * @example
 *   const token = await tokenFor(sandbox);
 *   const res = await call(sandbox, token, "GET", "/v2/identity/identities", { query: { limit: "10" } });
 */
import assert from "node:assert/strict";
import type { Sandbox } from "../../src/index.ts";

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test answers are inspected field by field
  body: any;
  text: string;
}

export interface TokenRequest {
  readOnly?: boolean;
  scope?: string;
  basic?: boolean;
}

export async function requestToken(sandbox: Sandbox, req: TokenRequest = {}): Promise<Answer> {
  const c = sandbox.credentials;
  const id = req.readOnly ? c.readOnlyClientId : c.clientId;
  const secret = req.readOnly ? c.readOnlyClientSecret : c.clientSecret;
  const form = new URLSearchParams({ grant_type: "client_credentials" });
  if (req.scope !== undefined) form.set("scope", req.scope);
  const headers: Record<string, string> = {};
  if (req.basic) {
    headers.authorization = `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;
  } else {
    form.set("client_id", id);
    form.set("client_secret", secret);
  }
  return read(await fetch(sandbox.tokenUrl, { method: "POST", headers, body: form }));
}

/** A bearer token for the read-write client (or the read-only one), all its scopes by default. */
export async function tokenFor(sandbox: Sandbox, req: TokenRequest = {}): Promise<string> {
  const res = await requestToken(sandbox, req);
  assert.equal(res.status, 200, `token request failed: ${res.text}`);
  return res.body.access_token as string;
}

export async function read(res: Response): Promise<Answer> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    // not JSON; keep the text
  }
  return { status: res.status, headers: res.headers, body, text };
}

export interface CallOptions {
  query?: Record<string, string>;
  body?: unknown;
  /** Sent verbatim instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export async function call(
  sandbox: Sandbox,
  token: string | undefined,
  method: string,
  path: string,
  opts: CallOptions = {},
): Promise<Answer> {
  const url = new URL(path, sandbox.apiUrl);
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
  const headers: Record<string, string> = { ...opts.headers };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined || opts.body !== undefined) {
    headers["content-type"] ??= "application/json";
    body = opts.rawBody ?? JSON.stringify(opts.body);
  }
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = body;
  if (opts.signal) init.signal = opts.signal;
  return read(await fetch(url, init));
}

/** Asserts an RFC 9457 problem answer with the given status and a detail matching `detail`. */
export function assertProblem(res: Answer, status: number, detail?: RegExp): void {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.match(res.headers.get("content-type") ?? "", /^application\/problem\+json/);
  assert.equal(res.body.status, status);
  assert.equal(typeof res.body.type, "string");
  assert.equal(typeof res.body.title, "string");
  assert.equal(typeof res.body.detail, "string");
  if (detail) assert.match(res.body.detail, detail);
}

export const CONTROLS = "/v2/identity/controls";
export const IDENTITIES = "/v2/identity/identities";

/** Creates a control through the API and returns the record. */
export async function createControl(
  sandbox: Sandbox,
  token: string,
  identityId: string,
  type = "SELL_ONLY",
): Promise<{ id: string; deleted_at?: string }> {
  const res = await call(sandbox, token, "POST", CONTROLS, {
    body: { identity_id: identityId, type, reason_code: "END_USER_REQUEST", reason: "test" },
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** Walks a cursor-paginated listing to its end and returns every item in order. */
export async function walk(
  sandbox: Sandbox,
  token: string,
  path: string,
  query: Record<string, string>,
  // biome-ignore lint/suspicious/noExplicitAny: items are checked by the caller
  between?: (page: number, items: any[]) => void | Promise<void>,
  // biome-ignore lint/suspicious/noExplicitAny: items are checked by the caller
): Promise<any[]> {
  // biome-ignore lint/suspicious/noExplicitAny: items are checked by the caller
  const all: any[] = [];
  let cursor = "";
  for (let page = 0; page < 100_000; page++) {
    const q = cursor ? { ...query, page_cursor: cursor } : query;
    const res = await call(sandbox, token, "GET", path, { query: q });
    assert.equal(res.status, 200, res.text);
    all.push(...res.body.items);
    cursor = res.body.next_page_cursor;
    assert.equal(typeof cursor, "string");
    if (cursor === "") return all;
    await between?.(page, res.body.items);
  }
  throw new Error("the listing never ended");
}

/**
 * Walks the identities listing to its end with repeated parameters
 * (`control_types=A&control_types=B`), repeating them with each page_cursor.
 */
export async function walkRepeated<T>(
  sandbox: Sandbox,
  token: string,
  params: [string, string][],
  between?: (page: number, items: T[]) => void | Promise<void>,
): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let cursor = "";
  for (let page = 1; page <= 10_000; page++) {
    const url = new URL(IDENTITIES, sandbox.apiUrl);
    for (const [k, v] of params) url.searchParams.append(k, v);
    if (cursor) url.searchParams.set("page_cursor", cursor);
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { items: T[]; next_page_cursor: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    items.push(...body.items);
    cursor = body.next_page_cursor;
    if (cursor === "") return { items, pages: page };
    await between?.(page, body.items);
  }
  throw new Error("the listing never ended");
}
