/**
 * A hostile listing in front of the sandbox, over real HTTP on 127.0.0.1: identity listings are
 * asked for small pages (`limit` rewritten), and each answer is tampered with as a live dataset
 * under a cursor can: items repeated within the page, items of the same cursor's earlier pages
 * served again (across pages, the first one's first item at the top of every later page), items of
 * the window's edges served again (seams), and the page's order shuffled. Nothing is invented: every
 * item served is one the sandbox served for that same query. Other requests pass untouched.
 *
 * @example
 *   const hostile = await startHostileListing(sandbox.apiUrl);
 *   hostile.tamper = { pageSize: 4, seed: 7, repeatWithin: 0.3, reserve: 0.5, firstOnTop: true, shuffle: true };
 *   // point --api-url at hostile.url
 *   await hostile.close();
 */
import { createServer, type IncomingMessage, request } from "node:http";
import type { AddressInfo } from "node:net";
import { prng } from "../../src/contract/index.ts";

export interface Tamper {
  /** Identities a listing page holds at most (the tool asks for 1000). */
  readonly pageSize: number;
  readonly seed: number;
  /** Chance that an item is served twice in its page. */
  readonly repeatWithin: number;
  /** Chance that a page brings back an item its cursor's earlier pages served. */
  readonly reserve: number;
  /** Every later page of a query starts with its first page's first item. */
  readonly firstOnTop: boolean;
  /** Pages come in a shuffled order. */
  readonly shuffle: boolean;
}

export interface HostileListing {
  readonly url: string;
  tamper: Tamper | null;
  /** Copies served beyond the sandbox's own answers, since the last reset. */
  extraCopies: number;
  /** Forgets what each query served (call between cases). */
  reset(): void;
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let data = "";
    req.setEncoding("utf8");
    req.on("data", (d) => {
      data += d;
    });
    req.on("end", () => resolve(data));
    req.on("error", reject);
  });

/** The query without its cursor and limit: what tells one cursor's pages from another's. */
function queryKey(url: URL): string {
  const q = new URLSearchParams(url.searchParams);
  q.delete("page_cursor");
  q.delete("limit");
  q.sort();
  return q.toString();
}

export async function startHostileListing(target: string): Promise<HostileListing> {
  const to = new URL(target);
  /** Items each query served so far, in order. */
  const served = new Map<string, unknown[]>();
  let rand = prng(1);
  const hostile: HostileListing = {
    url: "",
    tamper: null,
    extraCopies: 0,
    reset() {
      served.clear();
      hostile.extraCopies = 0;
      rand = prng(hostile.tamper?.seed ?? 1);
    },
    close: async () => {},
  };

  const mangle = (key: string, items: unknown[], t: Tamper): unknown[] => {
    const before = served.get(key) ?? [];
    const out: unknown[] = [];
    if (t.firstOnTop && before.length > 0) out.push(before[0]);
    for (const item of items) {
      out.push(item);
      if (rand() < t.repeatWithin) out.push(item);
    }
    if (before.length > 0 && rand() < t.reserve) {
      // A seam: the previous page's last item, and one at random from earlier pages.
      out.push(before[before.length - 1]);
      out.push(before[Math.floor(rand() * before.length)]);
    }
    served.set(key, [...before, ...items]);
    if (t.shuffle) {
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [out[i], out[j]] = [out[j], out[i]];
      }
    }
    hostile.extraCopies += out.length - items.length;
    return out;
  };

  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const url = new URL(req.url ?? "/", "http://x");
    const t = hostile.tamper;
    const listing = t && req.method === "GET" && url.pathname.endsWith("/identity/identities");
    if (listing) url.searchParams.set("limit", String(t.pageSize));
    const upstream = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: listing ? `${url.pathname}?${url.searchParams}` : req.url,
        headers: { ...req.headers, host: to.host },
      },
      (up) => {
        if (!listing || up.statusCode !== 200) {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
          return;
        }
        void readBody(up).then((text) => {
          const page = JSON.parse(text) as { items: unknown[] };
          page.items = mangle(queryKey(url), page.items, t);
          const out = JSON.stringify(page);
          const { "content-length": _length, ...headers } = up.headers;
          res.writeHead(200, { ...headers, "content-length": Buffer.byteLength(out) });
          res.end(out);
        });
      },
    );
    upstream.on("error", () => res.destroy());
    upstream.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(hostile, {
    url: `http://127.0.0.1:${port}${to.pathname === "/" ? "" : to.pathname}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return hostile;
}
