/**
 * Where the tool may send credentials: https anywhere, plain http only to loopback addresses (the
 * sandbox). Also the checks for the database URL and the report folder's name.
 */

const LOOPBACK_HOSTS = new Set(["localhost", "[::1]", "::1"]);

/**
 * True for 127.0.0.0/8, ::1 and localhost.
 *
 * @example
 *   isLoopbackHost("127.0.0.1") // true
 *   isLoopbackHost("api.example.com") // false
 */
export function isLoopbackHost(hostname: string): boolean {
  if (LOOPBACK_HOSTS.has(hostname)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** A checked endpoint URL (without a trailing slash), or why it is refused. */
export type UrlVerdict = { readonly url: string } | { readonly problem: string };

/**
 * Checks an endpoint URL: https anywhere, http only on loopback. The problem reads after the name
 * of the flag or env var that gave the value ("--api-url uses plain http:// ...").
 *
 * @example
 *   judgeEndpointUrl("https://api.example.com/") // { url: "https://api.example.com" }
 *   judgeEndpointUrl("http://api.example.com")   // { problem: "uses plain http:// ..." }
 */
export function judgeEndpointUrl(value: string): UrlVerdict {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: `is not a valid URL: "${value}"` };
  }
  const clean = url.toString().replace(/\/$/, "");
  if (url.protocol === "https:") return { url: clean };
  if (url.protocol === "http:") {
    if (isLoopbackHost(url.hostname)) return { url: clean };
    return {
      problem: `uses plain http:// for the non-loopback host "${url.hostname}". Credentials and tokens would cross the network unencrypted; use https:// (http:// is allowed only for 127.0.0.0/8, ::1 and localhost, e.g. the sandbox)`,
    };
  }
  return { problem: `must be an https:// URL, got protocol "${url.protocol}"` };
}

/**
 * True for a PostgreSQL connection URL (`postgres://` or `postgresql://`).
 *
 * @example
 *   isPostgresUrl("postgres://app@db/app") // true
 */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//.test(value);
}
