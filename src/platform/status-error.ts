/**
 * The error for an HTTP answer the client does not retry as it is: the platform's problem details,
 * with what the status means for the user (a refused fresh token, a missing scope, a redirect).
 */
import { classify, type HttpMethod, kindForStatus, PlatformError } from "./platform-error.ts";
import { parseProblem } from "./problem-details.ts";
import type { Redactor } from "./redactor.ts";
import { isRedirect, redirectRefused } from "./redirect-policy.ts";
import { PATHS, SCOPE_READ_CONTROL, SCOPE_READ_IDENTITY, SCOPE_WRITE_CONTROL } from "./types.ts";

/**
 * A PlatformError for an answer with `status` (not 2xx, not a 429, not a first 401).
 *
 * A 404 on the identities listing, which has no id to miss, means nothing answers that path at
 * `apiUrl`: the message names the URL and says to check --api-url.
 *
 * @example
 *   statusError(redactor, "GET /v2/identity/controls", spec, { status: 403, text, location: null }, false, apiUrl)
 */
export function statusError(
  redactor: Redactor,
  key: string,
  spec: { readonly method: HttpMethod; readonly template: string },
  answer: { readonly status: number; readonly text: string; readonly location: string | null },
  replayed: boolean,
  apiUrl: string,
): PlatformError {
  const { status } = answer;
  if (isRedirect(status)) return redirectRefused(key, status, answer.location, "--api-url");
  const problem = parseProblem(redactor.scrub(answer.text));
  const kind = kindForStatus(status);
  let detail = problem.detail;
  if (status === 401 && replayed) {
    detail += ` (the platform refused a freshly issued token too; likely causes: the client's credentials or tokens were revoked, --token-url issues tokens for a different client or tenant than --api-url serves, or this machine's clock is far off)`;
  } else if (status === 404 && spec.method === "GET" && spec.template === PATHS.identities) {
    detail += ` (nothing answers ${spec.template} under --api-url ${redactor.scrub(apiUrl)}: check --api-url, the platform's base URL, the part before /v2)`;
  } else if (status === 403) {
    detail += ` (the token lacks the scope this endpoint needs, ${scopeFor(spec)}; check which scopes this client id is allowed)`;
  }
  return new PlatformError({
    kind,
    classification: classify(kind, spec.method, true),
    endpoint: key,
    status,
    title: problem.title,
    detail,
  });
}

function scopeFor(spec: { readonly method: HttpMethod; readonly template: string }): string {
  if (spec.template === PATHS.controls)
    return spec.method === "GET" ? SCOPE_READ_CONTROL : SCOPE_WRITE_CONTROL;
  return SCOPE_READ_IDENTITY;
}
