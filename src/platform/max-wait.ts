import { PlatformError } from "./platform-error.ts";

/**
 * The refusal to wait when the platform asks for longer than `--max-wait-s`: a run that sleeps for
 * weeks helps no one, and a timer that long would overflow. The error names the wait, until when,
 * and what to do.
 *
 * @example
 *   const err = waitTooLong("POST /oauth2/token", 3_000_000, "Retry-After", 900);
 *   err.message // "POST /oauth2/token: 429: the platform asked to wait 3000000 s (Retry-After) …"
 */
export function waitTooLong(
  endpoint: string,
  seconds: number,
  source: "Retry-After" | "--penalty-s",
  maxWaitS: number,
  now = Date.now(),
): PlatformError {
  const until = new Date(now + seconds * 1000);
  const when = Number.isNaN(until.getTime()) ? "a date too far away to print" : until.toISOString();
  return new PlatformError({
    kind: "rate_limited",
    classification: "fatal",
    endpoint,
    status: 429,
    retryAfterS: seconds,
    detail: `the platform asked to wait ${seconds} s (${source}), until ${when}: longer than --max-wait-s ${maxWaitS}, so the run stops here instead of waiting. Run it again after that time (a resume continues where it stopped), or raise --max-wait-s.`,
  });
}
