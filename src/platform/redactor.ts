import { inspect } from "node:util";
import type { Logger } from "../log.ts";
import { scrub } from "../secret.ts";

/**
 * The set of strings (client secret, every bearer token issued) that must never leave the client.
 * Each is also registered with the logger, so a value that slips into a log line is scrubbed
 * there too; `scrub` cleans server-provided text before it goes into an error.
 *
 * @example
 *   const r = new Redactor(logger); r.add(token); r.scrub(`bad ${token}`) // "bad [redacted]"
 */
export class Redactor {
  readonly #secrets = new Set<string>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  add(value: string): void {
    if (!value) return;
    this.#secrets.add(value);
    this.#logger.addSecret(value);
  }

  scrub(text: string): string {
    return scrub(text, this.#secrets);
  }

  toJSON(): string {
    return "[Redactor]";
  }

  [inspect.custom](): string {
    return "[Redactor]";
  }
}
