import { randomBytes, timingSafeEqual } from "node:crypto";
import type { SandboxClient } from "../types.ts";

export interface TokenInfo {
  readonly clientId: string;
  readonly scopes: ReadonlySet<string>;
  readonly expiresAt: number;
}

export type VerifyResult = { ok: true; token: TokenInfo } | { ok: false; detail: string };

/** The token endpoint's answer, in OAuth2 form (RFC 6749 §5.1/§5.2), not problem+json. */
export interface TokenResponse {
  status: number;
  body: Record<string, string | number>;
  headers: Record<string, string>;
}

const MAX_REVOKED = 100_000;

function oauthError(status: number, error: string, description: string): TokenResponse {
  const headers: Record<string, string> = { "cache-control": "no-store" };
  if (status === 401) headers["www-authenticate"] = 'Basic realm="sandbox"';
  return { status, body: { error, error_description: description }, headers };
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function decodeBasicPart(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The client's id and secret, from HTTP Basic or the body (one method, not both), or the OAuth2
 * error that refuses them.
 */
function clientCredentials(
  authorization: string | undefined,
  form: URLSearchParams,
): { clientId: string; clientSecret: string } | TokenResponse {
  let clientId = form.get("client_id") ?? undefined;
  let clientSecret = form.get("client_secret") ?? undefined;
  if (authorization !== undefined) {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
    if (!m) return oauthError(401, "invalid_client", "the Authorization header is not Basic");
    if (clientSecret !== undefined) {
      return oauthError(
        400,
        "invalid_request",
        "use one client authentication method: HTTP Basic or client_secret in the body, not both",
      );
    }
    const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return oauthError(401, "invalid_client", "malformed Basic credentials");
    const basicId = decodeBasicPart(decoded.slice(0, colon));
    if (clientId !== undefined && clientId !== basicId) {
      return oauthError(400, "invalid_request", "client_id in the body differs from Basic");
    }
    clientId = basicId;
    clientSecret = decodeBasicPart(decoded.slice(colon + 1));
  }
  if (clientId === undefined || clientSecret === undefined) {
    return oauthError(
      401,
      "invalid_client",
      "client authentication required: HTTP Basic or client_id and client_secret in the body",
    );
  }
  return { clientId, clientSecret };
}

/**
 * OAuth2 client-credentials issuer: configured clients with allowed scopes, opaque random bearer
 * tokens with a TTL, and revocation of every token at once (for fault tests).
 *
 * @example
 *   const issuer = new OAuthIssuer([{ clientId: "c", clientSecret: "s", scopes: ["a"] }], 3600);
 *   const res = issuer.issue(undefined, new URLSearchParams("grant_type=client_credentials&client_id=c&client_secret=s"));
 *   issuer.verify(`Bearer ${res.body.access_token}`); // { ok: true, token: {...} }
 */
export class OAuthIssuer {
  private readonly clients = new Map<string, SandboxClient>();
  private tokens = new Map<string, TokenInfo>();
  private revoked = new Set<string>();
  issued = 0;
  revocations = 0;

  ttlS: number;

  constructor(clients: readonly SandboxClient[], ttlS: number) {
    this.ttlS = ttlS;
    for (const c of clients) this.clients.set(c.clientId, c);
  }

  /** Handles one token request; `authorization` is the raw header, `form` the parsed body. */
  issue(authorization: string | undefined, form: URLSearchParams | undefined): TokenResponse {
    if (!form) {
      return oauthError(
        400,
        "invalid_request",
        "the body must be application/x-www-form-urlencoded",
      );
    }
    const grant = form.get("grant_type");
    if (!grant) return oauthError(400, "invalid_request", "grant_type is required");
    if (grant !== "client_credentials") {
      return oauthError(
        400,
        "unsupported_grant_type",
        `grant_type must be client_credentials, got ${JSON.stringify(grant.slice(0, 40))}`,
      );
    }
    const credentials = clientCredentials(authorization, form);
    if ("status" in credentials) return credentials;
    const { clientId, clientSecret } = credentials;
    const client = this.clients.get(clientId);
    if (!client || !sameSecret(client.clientSecret, clientSecret)) {
      return oauthError(401, "invalid_client", "client authentication failed");
    }
    const requested = (form.get("scope") ?? "").split(" ").filter((s) => s !== "");
    for (const s of requested) {
      if (!client.scopes.includes(s)) {
        return oauthError(
          400,
          "invalid_scope",
          `scope ${JSON.stringify(s.slice(0, 80))} is not allowed for this client; allowed: ${client.scopes.join(" ")}`,
        );
      }
    }
    const scopes = requested.length > 0 ? [...new Set(requested)] : client.scopes;
    const token = randomBytes(32).toString("base64url");
    const now = Date.now();
    if (this.tokens.size > 10_000) this.prune(now);
    this.tokens.set(token, {
      clientId,
      scopes: new Set(scopes),
      expiresAt: now + this.ttlS * 1000,
    });
    this.issued++;
    return {
      status: 200,
      body: {
        access_token: token,
        token_type: "Bearer",
        expires_in: Math.max(1, Math.ceil(this.ttlS)),
        scope: scopes.join(" "),
      },
      headers: { "cache-control": "no-store", pragma: "no-cache" },
    };
  }

  /** Checks an `Authorization` header; the detail never contains the token. */
  verify(authorization: string | undefined, now = Date.now()): VerifyResult {
    if (authorization === undefined || authorization === "") {
      return { ok: false, detail: "no authorization header set" };
    }
    const m = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization);
    if (!m) {
      return { ok: false, detail: "the authorization header must be 'Bearer <token>'" };
    }
    const value = m[1]!;
    if (this.revoked.has(value)) return { ok: false, detail: "the bearer token was revoked" };
    const token = this.tokens.get(value);
    if (!token) return { ok: false, detail: "the bearer token is unknown" };
    if (token.expiresAt <= now) {
      return {
        ok: false,
        detail: `the bearer token expired at ${new Date(token.expiresAt).toISOString()}`,
      };
    }
    return { ok: true, token };
  }

  revokeAll(): void {
    for (const t of this.tokens.keys()) {
      if (this.revoked.size >= MAX_REVOKED) this.revoked.clear();
      this.revoked.add(t);
    }
    this.tokens.clear();
    this.revocations++;
  }

  reset(): void {
    this.tokens = new Map();
    this.revoked = new Set();
    this.issued = 0;
    this.revocations = 0;
  }

  private prune(now: number): void {
    // Expired tokens are kept for a while so they still answer "expired", then forgotten.
    for (const [t, info] of this.tokens) {
      if (info.expiresAt + 3_600_000 < now) this.tokens.delete(t);
    }
  }
}
