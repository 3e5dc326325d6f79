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

/** Removes the password from a connection URL, for logs and the runs table. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "[unparseable url]";
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
