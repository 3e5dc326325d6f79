import pino from "pino";
import { LOG_LEVELS, type LogFormat, type LogLevel } from "./log-levels.ts";
import { scrub } from "./secret.ts";

export { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "./log-levels.ts";

export interface Logger {
  readonly level: LogLevel;
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
  /** Registers a value (token, secret) that must be scrubbed from every later line. */
  addSecret(value: string): void;
  enabled(level: LogLevel): boolean;
}

export interface LoggerOptions {
  readonly level: LogLevel;
  /** `text` (default) or `json`. */
  readonly format?: LogFormat;
  /** Where lines go; stderr by default, so stdout stays machine-readable. */
  readonly write?: (line: string) => void;
  readonly secrets?: Iterable<string>;
  /**
   * Fields every JSON line carries, read at each line (the run id, once the run has one). Text
   * lines leave them out: people read the run id in the messages.
   */
  readonly context?: () => Readonly<Record<string, unknown>>;
}

/**
 * A levelled logger writing one line per event to stderr: text (`time LEVEL message {fields}`) or,
 * with `format: "json"`, one pino JSON object a line (`level`, `time`, `message`, the context's
 * `run_id`, and the fields). In either format the secrets are scrubbed from the message, from every
 * string of the fields, and from the finished line (raw and JSON-escaped), so a token that slips
 * into an error message is still never printed.
 *
 * @example
 *   const logger = createLogger({ level: "info", format: "json", context: () => ({ run_id }) });
 *   logger.info("plan completed", { findings: { in_sync: 12 } });
 */
export function createLogger(options: LoggerOptions): Logger {
  const secrets = new Set<string>(options.secrets ?? []);
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const threshold = LOG_LEVELS.indexOf(options.level);
  const enabled = (level: LogLevel) => LOG_LEVELS.indexOf(level) <= threshold;
  const emit =
    options.format === "json"
      ? jsonEmitter(write, secrets, options.context)
      : (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
          const time = new Date().toISOString();
          let line = `${time} ${level.toUpperCase().padEnd(5)} ${message}`;
          if (fields && Object.keys(fields).length > 0) {
            line += ` ${safeJson(scrubFields(fields, secrets))}`;
          }
          write(scrub(line, withEscaped(secrets)));
        };
  const log = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (enabled(level)) emit(level, message, fields);
  };
  return {
    level: options.level,
    error: log("error"),
    warn: log("warn"),
    info: log("info"),
    debug: log("debug"),
    addSecret: (value) => {
      if (value) secrets.add(value);
    },
    enabled,
  };
}

/** The secrets, and each as JSON writes it inside a string (a quote or backslash escaped). */
function withEscaped(secrets: Set<string>): Set<string> {
  const all = new Set<string>();
  for (const s of secrets) all.add(s).add(JSON.stringify(s).slice(1, -1));
  return all;
}

/** A copy of `fields` (JSON-safe) with the secrets scrubbed from every string in it. */
function scrubFields(
  fields: Readonly<Record<string, unknown>>,
  secrets: Set<string>,
): Record<string, unknown> {
  try {
    const text = JSON.stringify(fields, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
    return JSON.parse(text, (_k, v) => (typeof v === "string" ? scrub(v, secrets) : v));
  } catch {
    return { fields: "[unserialisable fields]" };
  }
}

/**
 * JSON lines through pino. Secrets are scrubbed twice: from the message and field values before
 * they are serialised, and from the finished line in their JSON-escaped spelling too (a secret
 * holding a quote or a backslash is written escaped, and would slip past a plain search).
 */
function jsonEmitter(
  write: (line: string) => void,
  secrets: Set<string>,
  context?: () => Readonly<Record<string, unknown>>,
) {
  const destination = {
    write: (line: string) => write(scrub(line.trimEnd(), withEscaped(secrets))),
  };
  const json = pino(
    {
      level: "debug",
      base: undefined,
      messageKey: "message",
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  return (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    json[level](scrubFields({ ...context?.(), ...fields }, secrets), scrub(message, secrets));
  };
}

/** A logger that drops everything; for library callers and tests that do not care. */
export const silentLogger: Logger = createLogger({ level: "error", write: () => {} });

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
  } catch {
    return "[unserialisable fields]";
  }
}
