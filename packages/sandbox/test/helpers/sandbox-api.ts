/**
 * Real-HTTP helpers for the sandbox tests beyond identities: admin seeding calls,
 * queries with repeated parameters (`ids=a&ids=b`) and walks of keyset listings.
 *
 * @example
 *   const seeded = await adminOk(sandbox, "POST", "/balances", { items: [...] });
 *   const all = await walkAll(sandbox, token, DEPOSIT_ADDRESSES, { networks: ["BITCOIN"] });
 */
import assert from "node:assert/strict";
import type { Sandbox } from "../../src/index.ts";
import { type Answer, read } from "./sandbox-http.ts";

export const quoteExecutionsPath = (profileId: string) =>
  `/v2/profiles/${encodeURIComponent(profileId)}/quote-executions`;
export const orderPath = (profileId: string, id: string) =>
  `/v2/profiles/${encodeURIComponent(profileId)}/orders/${encodeURIComponent(id)}`;
export const INTERNAL_TRANSFER = "/v2/transfer/internal";
export const DEPOSIT_ADDRESSES = "/v2/transfer/deposit-addresses";
export const rulePath = (id: string) => `/v2/orchestration/rules/${encodeURIComponent(id)}`;

export type Params = Record<string, string | readonly string[] | undefined>;

/** A call to the admin surface (no auth); `path` is relative to /__sandbox. */
export async function admin(
  sandbox: Sandbox,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.headers = { "content-type": "application/json" };
    init.body = JSON.stringify(body);
  }
  return read(await fetch(`${sandbox.adminUrl}${path}`, init));
}

/** An admin call that must answer 200; returns the parsed body. */
export async function adminOk(
  sandbox: Sandbox,
  method: string,
  path: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: admin answers are inspected field by field
): Promise<any> {
  const res = await admin(sandbox, method, path, body);
  assert.equal(res.status, 200, `${method} ${path}: ${res.text}`);
  return res.body;
}

/** A GET with repeated parameters for array values. */
export async function get(
  sandbox: Sandbox,
  token: string | undefined,
  path: string,
  params: Params = {},
): Promise<Answer> {
  const url = new URL(path, sandbox.apiUrl);
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    for (const one of typeof v === "string" ? [v] : v) url.searchParams.append(k, one);
  }
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  return read(await fetch(url, { headers }));
}

/** A JSON POST (or any method with a body) to the API. */
export async function send(
  sandbox: Sandbox,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  return read(await fetch(new URL(path, sandbox.apiUrl), init));
}

/**
 * Walks a keyset listing to its end, repeating the same parameters with each page_cursor, and
 * returns every item in order with the number of pages.
 */
export async function walkAll(
  sandbox: Sandbox,
  token: string,
  path: string,
  params: Params,
  between?: (page: number) => void | Promise<void>,
  // biome-ignore lint/suspicious/noExplicitAny: items are checked by the caller
): Promise<{ items: any[]; pages: number }> {
  // biome-ignore lint/suspicious/noExplicitAny: items are checked by the caller
  const items: any[] = [];
  let cursor = "";
  for (let page = 1; page <= 10_000; page++) {
    const res = await get(
      sandbox,
      token,
      path,
      cursor ? { ...params, page_cursor: cursor } : params,
    );
    assert.equal(res.status, 200, res.text);
    items.push(...res.body.items);
    cursor = res.body.next_page_cursor;
    assert.equal(typeof cursor, "string");
    if (cursor === "") return { items, pages: page };
    await between?.(page);
  }
  throw new Error("the listing never ended");
}

/** Keyset order of the extended listings: (created_at, id), newest first for DESC. */
export function byKeyset(order: "ASC" | "DESC") {
  return (a: { created_at: string; id: string }, b: { created_at: string; id: string }) => {
    const c =
      a.created_at !== b.created_at
        ? Date.parse(a.created_at) - Date.parse(b.created_at)
        : a.id < b.id
          ? -1
          : a.id > b.id
            ? 1
            : 0;
    return order === "ASC" ? c : -c;
  };
}
