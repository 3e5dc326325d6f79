/**
 * The moment a request really leaves: when fetch's HTTP client (Node's bundled undici) writes its
 * headers to the socket. A budget grant is followed by that moment only as soon as the event
 * loop allows; a stall in between (a synchronous database statement, a long parse) would otherwise
 * let requests granted in different seconds go out in the same one.
 */
import diagnostics_channel from "node:diagnostics_channel";

const SEND_HEADERS = "undici:client:sendHeaders";

/** Callbacks waiting for their request's headers, by `METHOD origin+path`, oldest first. */
const waiting = new Map<string, (() => void)[]>();
let subscribed = false;

function onSendHeaders(message: unknown): void {
  const r = (message as { request?: { method?: string; origin?: unknown; path?: string } }).request;
  if (!r) return;
  const key = `${r.method} ${String(r.origin)}${r.path}`;
  const queue = waiting.get(key);
  const first = queue?.shift();
  if (queue?.length === 0) waiting.delete(key);
  first?.();
}

/**
 * Calls `onSent` once, when the request to `url` is written to its socket. The returned function
 * must be called when the exchange is over: if the headers were never seen going out (no
 * connection, an HTTP client that does not publish them), it calls `onSent` then, late rather
 * than never, so a caller that paces by send times errs on the slow side.
 *
 * Requests to the same URL and method are matched first come, first served; they are
 * interchangeable for pacing.
 *
 * @example
 *   const done = watchSend("GET", url, () => budget.sent(template));
 *   try { await fetch(url); } finally { done(); }
 */
export function watchSend(method: string, url: string, onSent: () => void): () => void {
  if (!subscribed) {
    diagnostics_channel.subscribe(SEND_HEADERS, onSendHeaders);
    subscribed = true;
  }
  const u = new URL(url);
  const key = `${method.toUpperCase()} ${u.origin}${u.pathname}${u.search}`;
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    onSent();
  };
  const queue = waiting.get(key);
  if (queue) queue.push(once);
  else waiting.set(key, [once]);
  return () => {
    const q = waiting.get(key);
    const i = q?.indexOf(once) ?? -1;
    if (q && i >= 0) {
      q.splice(i, 1);
      if (q.length === 0) waiting.delete(key);
    }
    once();
  };
}
