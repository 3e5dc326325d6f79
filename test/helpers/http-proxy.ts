/**
 * A real HTTP proxy on 127.0.0.1 in front of the sandbox: it records every request it forwards
 * (method, path and query, body), can answer some requests itself with a 503 instead, and can
 * rewrite an answer, answer a request itself, or hold requests unanswered until the test releases them, so tests see exactly
 * what the tool sent and can fail one listing window, feed it a hostile page or keep a run in one
 * stage on purpose. No mock: the tool
 * and the sandbox talk HTTP through it.
 *
 * @example
 *   const proxy = await startProxy(sandbox.apiUrl);
 *   proxy.failWhen = (r) => r.url.includes("created_at.gte") ? "fail" : "forward";
 *   // point API_BASE_URL at proxy.url
 *   proxy.requests.filter((r) => r.url.startsWith("/v2/identity/identities?"));
 *   await proxy.close();
 */
import { createServer, type IncomingMessage, request } from "node:http";
import type { AddressInfo } from "node:net";

export interface ProxiedRequest {
  readonly method: string;
  /** Path and query, as the tool sent it. */
  readonly url: string;
  readonly body: string;
  /** The status the client saw. */
  status: number;
}

export interface TestProxy {
  /** Base URL to give the tool, e.g. http://127.0.0.1:41234 (the target's path prefix kept). */
  readonly url: string;
  readonly requests: ProxiedRequest[];
  /** Decides per request: forward it, or answer 503 without forwarding. */
  failWhen: (r: ProxiedRequest) => "forward" | "fail";
  /** Rewrites an answer's body before the tool sees it (null: pass it through untouched). */
  rewrite: ((r: ProxiedRequest, body: string) => string) | null;
  /** Answers a request itself, unforwarded, when this returns an answer (null: go on). */
  answerWhen: (r: ProxiedRequest) => { status: number; body: string } | null;
  /** Requests this says true of wait, unforwarded, until {@link release}. */
  holdWhen: (r: ProxiedRequest) => boolean;
  /** The requests held now. */
  readonly held: ProxiedRequest[];
  /** Forwards the held requests whose client still waits (a killed client's are dropped). */
  release(): void;
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

/** Starts a proxy to `target` (an http://127.0.0.1 base URL). */
export async function startProxy(target: string): Promise<TestProxy> {
  const to = new URL(target);
  const requests: ProxiedRequest[] = [];
  const proxy: TestProxy = {
    url: "",
    requests,
    failWhen: () => "forward",
    rewrite: null,
    answerWhen: () => null,
    holdWhen: () => false,
    held: [],
    release: () => {
      for (const go of waiting.splice(0)) go();
    },
    close: async () => {},
  };
  const waiting: (() => void)[] = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const record: ProxiedRequest = {
      method: req.method ?? "GET",
      url: req.url ?? "/",
      body,
      status: 0,
    };
    requests.push(record);
    if (proxy.failWhen(record) === "fail") {
      record.status = 503;
      res.writeHead(503, { "content-type": "application/problem+json" });
      res.end(
        JSON.stringify({
          type: "about:blank",
          title: "Service Unavailable",
          status: 503,
          detail: "injected by the test proxy",
        }),
      );
      return;
    }
    const own = proxy.answerWhen(record);
    if (own) {
      record.status = own.status;
      res.writeHead(own.status, { "content-type": "application/json" });
      res.end(own.body);
      return;
    }
    if (proxy.holdWhen(record)) {
      proxy.held.push(record);
      await new Promise<void>((resolve) => waiting.push(resolve));
      proxy.held.splice(proxy.held.indexOf(record), 1);
      if (req.socket.destroyed) return;
    }
    const upstream = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: to.host },
      },
      (up) => {
        record.status = up.statusCode ?? 0;
        const rewrite = proxy.rewrite;
        if (!rewrite) {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
          return;
        }
        void readBody(up).then((text) => {
          const out = rewrite(record, text);
          const { "content-length": _length, ...headers } = up.headers;
          res.writeHead(up.statusCode ?? 502, {
            ...headers,
            "content-length": Buffer.byteLength(out),
          });
          res.end(out);
        });
      },
    );
    upstream.on("error", () => {
      record.status = 502;
      res.destroy();
    });
    upstream.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return proxy;
}
