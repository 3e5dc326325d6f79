/**
 * PostgreSQL and socket errors grouped by name, as graphile-worker does: the ones that mean "the
 * connection went away, the same work may succeed on a fresh one" (retryable) against everything
 * else (a bad query, a constraint, a permission: retrying cannot help).
 */

/** SQLSTATEs of a lost or refused connection (PostgreSQL errcodes appendix). */
export const RETRYABLE_SQLSTATES = Object.freeze({
  connection_exception: "08000",
  connection_does_not_exist: "08003",
  connection_failure: "08006",
  sqlclient_unable_to_establish_sqlconnection: "08001",
  sqlserver_rejected_establishment_of_sqlconnection: "08004",
  transaction_resolution_unknown: "08007",
  too_many_connections: "53300",
  admin_shutdown: "57P01",
  crash_shutdown: "57P02",
  cannot_connect_now: "57P03",
  idle_session_timeout: "57P05",
} as const);

/** Socket and resolver codes of a connection that broke or could not be made. */
export const RETRYABLE_SOCKET_CODES = Object.freeze([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EAI_AGAIN",
] as const);

/**
 * node-postgres reports a closed socket without a code; these are its messages for it (a client
 * whose connection died, a connect attempt that timed out).
 */
const LOST_MESSAGES = [
  /^Connection terminated( unexpectedly)?$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^timeout exceeded when trying to connect$/,
  /^Connection terminated due to connection timeout$/,
];

const SQLSTATES = new Set<string>(Object.values(RETRYABLE_SQLSTATES));
const SOCKET_CODES = new Set<string>(RETRYABLE_SOCKET_CODES);

/**
 * True when `err` means the connection to PostgreSQL was lost or could not be established, so the
 * same work may succeed on a fresh connection. False for every error of the work itself.
 *
 * @example
 *   isConnectionLoss({ code: "57P01", message: "terminating connection due to administrator command" }) // true
 *   isConnectionLoss({ code: "23505", message: "duplicate key value" }) // false
 */
export function isConnectionLoss(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { code?: unknown; message?: unknown; errors?: unknown[]; cause?: unknown };
  if (typeof e.code === "string" && (SQLSTATES.has(e.code) || SOCKET_CODES.has(e.code)))
    return true;
  if (typeof e.message === "string" && LOST_MESSAGES.some((m) => m.test(e.message as string)))
    return true;
  // IPv4 and IPv6 both refused: an AggregateError whose members carry the codes.
  if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every(isConnectionLoss))
    return true;
  return false;
}

/** A short, secret-free reason for logs: code and message. */
export function describeConnectionLoss(err: unknown): string {
  const e = err as { code?: string; message?: string; errors?: { message?: string }[] };
  const message = e?.message || e?.errors?.[0]?.message || String(err);
  return e?.code ? `${message} (${e.code})` : message;
}
