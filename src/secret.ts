import { inspect } from "node:util";

const REDACTED = "[redacted]";

/**
 * A value that must never be printed. `String(secret)`, `JSON.stringify`, `util.inspect` and
 * template literals all yield `[redacted]`; only {@link Secret.reveal} gives the raw value, and it
 * is called at the single place that puts the value on the wire.
 *
 * @example
 *   const s = new Secret("hunter2");
 *   `${s}` // "[redacted]"
 *   s.reveal() // "hunter2"
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
    Object.freeze(this);
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}

/** Query parameters of a PostgreSQL URL that carry a credential (node-postgres reads them all). */
const SECRET_URL_PARAMS = ["password", "sslpassword", "sslkey"];

/**
 * A connection URL fit for logs and error messages: the password of the userinfo and the
 * `password`, `sslpassword` and `sslkey` query parameters are replaced by `***`.
 *
 * @example
 *   redactUrl("postgres://app:pw@db/app?password=pw2&sslmode=require")
 *   // "postgres://app:***@db/app?password=***&sslmode=require"
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    for (const key of [...parsed.searchParams.keys()]) {
      if (SECRET_URL_PARAMS.includes(key.toLowerCase())) parsed.searchParams.set(key, "***");
    }
    return parsed.toString();
  } catch {
    return "[unparseable url]";
  }
}

/**
 * The credentials a PostgreSQL URL carries (the userinfo password and the values of the `password`,
 * `sslpassword` and `sslkey` query parameters), to be scrubbed from every log line.
 *
 * @example
 *   connectionSecrets("postgres://app@db/app?password=s3cret") // ["s3cret"]
 */
export function connectionSecrets(url: string): string[] {
  try {
    const parsed = new URL(url);
    const out = parsed.password ? [decodeURIComponent(parsed.password), parsed.password] : [];
    for (const [key, value] of parsed.searchParams) {
      if (SECRET_URL_PARAMS.includes(key.toLowerCase()) && value) out.push(value);
    }
    return [...new Set(out)];
  } catch {
    return [];
  }
}

/**
 * Where a PostgreSQL URL points, and nothing else: what the runs table records instead of the URL.
 *
 * @example
 *   postgresTarget("postgres://app:pw@db.internal:6432/app?sslmode=require")
 *   // { host: "db.internal", port: 6432, database: "app" }
 */
export function postgresTarget(url: string): { host: string; port: number; database: string } {
  try {
    const parsed = new URL(url);
    const host =
      decodeURIComponent(parsed.hostname) || parsed.searchParams.get("host") || "localhost";
    const database =
      decodeURIComponent(parsed.pathname.replace(/^\//, "")) ||
      decodeURIComponent(parsed.username) ||
      "postgres";
    return { host, port: Number(parsed.port || 5432), database };
  } catch {
    return { host: "[unparseable url]", port: 0, database: "" };
  }
}

/**
 * Replaces every occurrence of the given secret strings in `text`. Used as a last line of defence on
 * anything that leaves the process (log lines, error messages, report cells).
 */
export function scrub(text: string, secrets: Iterable<string>): string {
  let out = text;
  for (const s of secrets) {
    if (s.length >= 4) out = out.split(s).join(REDACTED);
  }
  return out;
}
