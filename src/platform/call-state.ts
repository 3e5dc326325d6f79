/**
 * One API call's attempts as `HttpClient` counts them, and the errors that end a call whatever
 * its last answer was: cancelled, or still ambiguous after an ambiguous attempt.
 */
import { classify, type HttpMethod, PlatformError } from "./platform-error.ts";

/** One call's attempts: only failures spend the retry budget, a 429 or a 401 replay does not. */
export interface CallState {
  readonly key: string;
  attempts: number;
  failures: number;
  replayed: boolean;
  hadAmbiguous: boolean;
}

/**
 * The error of a call stopped by its signal. A halted client says why it stopped (the platform's
 * refusal, `haltReason`), not merely that it did.
 */
export function cancelledError(
  haltReason: unknown,
  method: HttpMethod,
  call: CallState,
  sent: boolean,
): PlatformError {
  const { key: endpoint, attempts, hadAmbiguous: afterAmbiguousAttempt } = call;
  // Stopping a delete between an ambiguous attempt and its repeat leaves it just as unknown.
  const classification = afterAmbiguousAttempt ? "ambiguous" : classify("cancelled", method, sent);
  if (haltReason instanceof PlatformError) {
    return haltReason.with({ kind: "cancelled", classification, afterAmbiguousAttempt, attempts });
  }
  return new PlatformError({
    kind: "cancelled",
    classification,
    afterAmbiguousAttempt,
    endpoint,
    detail: sent ? "cancelled while the request was in flight" : "cancelled before sending",
    attempts,
  });
}

/**
 * After an ambiguous attempt, whatever ends the call leaves the outcome unknown. Only the caller
 * can read a later 404/409 as "done" (deletes do), so the flag travels with the error.
 */
export function stillAmbiguous(error: PlatformError, attempts: number): PlatformError {
  return error.with({ attempts, afterAmbiguousAttempt: true, classification: "ambiguous" });
}
