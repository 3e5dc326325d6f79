/**
 * A tiny platform of our own over real HTTP on 127.0.0.1, for answers the sandbox never gives:
 * listings that never end, a page that repeats an identity, a token endpoint that asks to wait for
 * weeks, error bodies that echo headers. Each route is a plain handler; unset routes behave like a
 * healthy platform with the given identities and no controls.
 *
 * @example
 *   const p = await startHostilePlatform({ identities: ids, token: (req, reply) => reply.code(429)
 *     .header("retry-after", "3000000").send({ error: "slow_down" }) });
 *   await runCli(["plan"], p.env);
 *   await p.close();
 */
import fastify, { type FastifyReply, type FastifyRequest } from "fastify";

export type Handler = (req: FastifyRequest, reply: FastifyReply) => unknown;

export interface HostileOptions {
  /** Identity ids the default listing serves (one page each `limit`), with no controls. */
  readonly identities?: readonly string[];
  readonly token?: Handler;
  readonly identitiesList?: Handler;
  readonly controlsList?: Handler;
  readonly createControl?: Handler;
}

export interface HostilePlatform {
  readonly url: string;
  /** Platform settings for the CLI (the secret by env, as users pass it). */
  readonly env: Record<string, string>;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Requests received, by `METHOD path`. */
  readonly calls: Record<string, number>;
  close(): Promise<void>;
}

/** The wire form of an identity with no active control. */
export const identityRecord = (id: string) => ({
  id,
  created_at: "2024-01-01T00:00:00Z",
  status_details: { active_controls: [] as unknown[] },
});

export async function startHostilePlatform(opts: HostileOptions = {}): Promise<HostilePlatform> {
  const app = fastify({ logger: false });
  const calls: Record<string, number> = {};
  app.addHook("onRequest", async (req) => {
    const key = `${req.method} ${req.url.split("?")[0]}`;
    calls[key] = (calls[key] ?? 0) + 1;
  });
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string" },
    (_req, body, done) => done(null, body),
  );
  const ids = opts.identities ?? [];
  app.post(
    "/oauth2/token",
    opts.token ??
      (async () => ({
        access_token: "hostile-token",
        token_type: "Bearer",
        expires_in: 3600,
        scope:
          "identity:read_identity identity:read_identity_control identity:write_identity_control",
      })),
  );
  app.get(
    "/v2/identity/identities",
    opts.identitiesList ??
      (async (req) => {
        const q = req.query as { limit?: string; page_cursor?: string };
        const limit = Number(q.limit ?? 100);
        const from = Number(q.page_cursor ?? 0);
        const items = ids.slice(from, from + limit).map(identityRecord);
        const next = from + limit < ids.length ? String(from + limit) : "";
        return { items, next_page_cursor: next };
      }),
  );
  app.get(
    "/v2/identity/controls",
    opts.controlsList ?? (async () => ({ items: [], next_page_cursor: "" })),
  );
  let created = 0;
  app.post(
    "/v2/identity/controls",
    opts.createControl ??
      (async (req) => {
        const body = req.body as { type: string; reason_code: string; reason?: string };
        created += 1;
        return {
          id: `ctl-${created}`,
          type: body.type,
          set_by: "SET_BY_CLIENT",
          is_overridable: true,
          reason_code: body.reason_code,
          reason: body.reason ?? null,
          created_at: new Date().toISOString(),
          deleted_at: null,
        };
      }),
  );
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  const clientId = "hostile-client";
  const clientSecret = "hostile-secret-Qx7vR2mZ";
  return {
    url,
    env: {
      API_BASE_URL: url,
      OAUTH_TOKEN_URL: `${url}/oauth2/token`,
      OAUTH_CLIENT_ID: clientId,
      OAUTH_CLIENT_SECRET: clientSecret,
    },
    clientId,
    clientSecret,
    calls,
    close: () => app.close(),
  };
}
