/**
 * Stoplight Prism in `proxy` mode in front of a sandbox: every request and answer passes the
 * published schema's validator, which reports what breaks it in an `sl-violations` header.
 *
 * @example
 *   const prism = await startPrism(sandbox.apiUrl, CONFORMANCE_SCHEMA_FILE);
 *   const res = await prism.call("GET", "/v2/identity/identities", { token });
 *   res.violations; // [] when both the request and the answer conform
 *   await prism.close();
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { schemaPath } from "../../src/shared.ts";
import { SANDBOX_ROOT } from "./sandbox-process.ts";

/** Prism's own entry script, wherever npm placed the package (hoisted to the repository root). */
function prismBin(): string {
  const manifest = createRequire(import.meta.url).resolve("@stoplight/prism-cli/package.json");
  const { bin } = createRequire(import.meta.url)(manifest) as { bin: Record<string, string> };
  return join(dirname(manifest), bin.prism ?? "dist/index.js");
}

export interface Violation {
  location: string[];
  severity: string;
  code: string | number;
  message: string;
}

export interface ProxiedAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: answers are inspected field by field
  body: any;
  violations: Violation[];
}

export interface PrismProxy {
  readonly url: string;
  call(
    method: string,
    path: string,
    opts?: { token?: string; query?: [string, string][]; body?: unknown },
  ): Promise<ProxiedAnswer>;
  output(): string;
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts `prism proxy <schema> <upstream>` on a free loopback port; killed if never ready. */
export async function startPrism(
  upstream: string,
  schemaFile: string,
  // A failure bound, not a speed claim: Prism loads for many seconds on a busy machine.
  readyTimeoutMs = 180_000,
): Promise<PrismProxy> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      prismBin(),
      ...["proxy", schemaPath(schemaFile), upstream, "--host", "127.0.0.1", "--port", String(port)],
    ],
    { cwd: SANDBOX_ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.on("data", (d) => {
    output += d;
  });
  child.stderr?.on("data", (d) => {
    output += d;
  });
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const deadline = Date.now() + readyTimeoutMs;
  while (!output.includes("Prism is listening")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`prism proxy did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    output: () => output,
    async call(method, path, opts = {}) {
      const target = new URL(path, url);
      for (const [k, v] of opts.query ?? []) target.searchParams.append(k, v);
      const headers: Record<string, string> = {};
      if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
      const init: RequestInit = { method, headers };
      if (opts.body !== undefined) {
        headers["content-type"] = "application/json";
        init.body = JSON.stringify(opts.body);
      }
      const res = await fetch(target, init);
      const text = await res.text();
      const raw = res.headers.get("sl-violations");
      let body: unknown = text;
      try {
        body = text === "" ? undefined : JSON.parse(text);
      } catch {
        // not JSON; kept as text
      }
      return { status: res.status, body, violations: raw ? (JSON.parse(raw) as Violation[]) : [] };
    },
    async close() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Conformance assertions over a proxy, recording every operation ("METHOD /template") exercised. */
export interface ConformanceCheck {
  readonly exercised: Set<string>;
  readonly responseViolations: string[];
  /** A request the schema allows: neither it nor its answer may break the schema. */
  valid(
    op: string,
    path: string,
    query?: [string, string][],
    body?: unknown,
  ): Promise<ProxiedAnswer>;
  /** A request that breaks the schema on purpose: only request violations, and a 4xx problem. */
  invalid(
    op: string,
    path: string,
    opts?: { query?: [string, string][]; body?: unknown; token?: string | null },
  ): Promise<ProxiedAnswer>;
}

export function conformanceCheck(prism: PrismProxy, token: string): ConformanceCheck {
  const exercised = new Set<string>();
  const responseViolations: string[] = [];
  return {
    exercised,
    responseViolations,
    async valid(op, path, query = [], body) {
      const [method] = op.split(" ") as [string];
      exercised.add(op);
      const res = await prism.call(method, path, { token, query, body });
      assert.deepEqual(
        res.violations,
        [],
        `${op} ${path} ${JSON.stringify(query)} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
      );
      return res;
    },
    async invalid(op, path, opts = {}) {
      const [method] = op.split(" ") as [string];
      exercised.add(op);
      const res = await prism.call(method, path, {
        token: opts.token === null ? undefined : (opts.token ?? token),
        query: opts.query ?? [],
        body: opts.body,
      });
      const onResponse = res.violations.filter((v) => v.location[0] !== "request");
      responseViolations.push(...onResponse.map((v) => `${op}: ${v.message}`));
      assert.deepEqual(onResponse, [], `${op} answer breaks the schema`);
      assert.ok(res.violations.length > 0, `${op} ${JSON.stringify(opts)} was meant to be invalid`);
      assert.ok(res.status >= 400 && res.status < 500, `${op}: ${res.status}`);
      return res;
    },
  };
}
