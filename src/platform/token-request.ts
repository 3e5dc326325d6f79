/**
 * One request to the OAuth2 token endpoint: the client-credentials grant with HTTP Basic
 * credentials, within the timeout, under the tool's one redirect policy (a redirect is refused, never
 * followed: it would re-POST the credentials and the grant elsewhere) and a cap on the body.
 */
import { request } from "undici";
import type { Secret } from "../secret.ts";
import { MAX_TOKEN_RESPONSE_BYTES, readBounded, tooLargeDetail } from "./bounded-body.ts";
import { LinkedSignal } from "./linked-signal.ts";
import { describeFetchFailure, type FetchFailure, PlatformError } from "./platform-error.ts";
import { isRedirect, redirectRefused } from "./redirect-policy.ts";

export interface TokenRequestSettings {
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: Secret;
  readonly scopes: readonly string[];
  readonly timeoutMs: number;
}

/** The token endpoint's answer (any status but a redirect), or why there was none. */
export type TokenAnswer =
  | { readonly status: number; readonly text: string; readonly retryAfter: string | null }
  | { readonly failure: FetchFailure };

/**
 * Asks for a token once. Throws a fatal PlatformError for a redirect or an oversized body; any
 * other outcome is returned for the token manager to judge.
 *
 * @example
 *   const a = await requestToken(settings, signal, "POST /oauth2/token");
 */
export async function requestToken(
  o: TokenRequestSettings,
  signal: AbortSignal,
  endpoint: string,
): Promise<TokenAnswer> {
  const link = new LinkedSignal([signal], o.timeoutMs);
  try {
    const res = await request(o.tokenUrl, {
      method: "POST",
      headers: {
        authorization: `Basic ${basic(o.clientId, o.clientSecret.reveal())}`,
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
      },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        scope: o.scopes.join(" "),
      }).toString(),
      signal: link.signal,
    });
    const status = res.statusCode;
    if (isRedirect(status)) {
      await res.body.dump().catch(() => undefined);
      throw redirectRefused(endpoint, status, res.headers.location, "--token-url");
    }
    const read = await readBounded(
      res.body,
      res.headers["content-length"],
      MAX_TOKEN_RESPONSE_BYTES,
    );
    if ("tooLarge" in read) {
      throw new PlatformError({
        kind: "protocol",
        classification: "fatal",
        endpoint,
        status,
        detail: tooLargeDetail(read.tooLarge, MAX_TOKEN_RESPONSE_BYTES),
      });
    }
    const retryAfter = res.headers["retry-after"];
    return {
      status,
      text: read.text,
      retryAfter: (Array.isArray(retryAfter) ? retryAfter[0] : retryAfter) ?? null,
    };
  } catch (err) {
    if (err instanceof PlatformError) throw err;
    return {
      failure: describeFetchFailure(err, { timedOut: link.timedOut, cancelled: link.cancelled }),
    };
  } finally {
    link.dispose();
  }
}

/** RFC 6749 §2.3.1: id and secret are form-encoded before the Basic encoding. */
export function basic(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");
  return Buffer.from(`${enc(id)}:${enc(secret)}`).toString("base64");
}
