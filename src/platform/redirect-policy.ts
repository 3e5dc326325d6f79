/**
 * The one redirect policy of every request the tool makes, the token request included: a redirect
 * is never followed, because it would carry the bearer token or the client's Basic credentials
 * (and the grant) to wherever it points. It is refused, naming the status and the target.
 */
import { PlatformError } from "./platform-error.ts";

/** True for the statuses that redirect (301, 302, 303, 307, 308 and the rest of 3xx). */
export const isRedirect = (status: number): boolean => status >= 300 && status < 400;

/**
 * The refusal of a redirect: fatal, since following it is what must not happen.
 *
 * @example
 *   redirectRefused("POST /oauth2/token", 307, "http://127.0.0.1:9999/steal", "--token-url")
 *   // "POST /oauth2/token: 307: the platform redirected to http://127.0.0.1:9999/steal; …"
 */
export function redirectRefused(
  endpoint: string,
  status: number,
  location: string | string[] | undefined | null,
  flag: "--api-url" | "--token-url",
): PlatformError {
  const target = Array.isArray(location) ? location[0] : location;
  const where = target ? `to ${visibleTarget(target)}` : "with no Location";
  return new PlatformError({
    kind: "protocol",
    classification: "fatal",
    endpoint,
    status,
    detail: `the platform redirected ${where}; redirects are never followed (they would carry the credentials elsewhere), so nothing was sent there. Check ${flag}: it must be the final address`,
  });
}

/** The Location as printed: cut short, control characters escaped, credentials in it dropped. */
function visibleTarget(target: string): string {
  let shown = target;
  try {
    const url = new URL(target);
    if (url.username || url.password) {
      url.username = "";
      url.password = "";
    }
    shown = url.toString();
  } catch {
    // A relative or malformed Location is shown as given.
  }
  const escaped = JSON.stringify(shown.length > 200 ? `${shown.slice(0, 200)}…` : shown);
  return escaped.slice(1, -1);
}
