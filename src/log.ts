import { scrub } from "./secret.ts";

export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

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
  /** Where lines go; stderr by default, so stdout stays machine-readable. */
  readonly write?: (line: string) => void;
  readonly secrets?: Iterable<string>;
}

/**
 * A small levelled logger writing one line per event to stderr. Every line passes through the
 * secret scrubber, so a token that slips into an error message is still never printed.
 */
export function createLogger(options: LoggerOptions): Logger {
  const secrets = new Set<string>(options.secrets ?? []);
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const threshold = LOG_LEVELS.indexOf(options.level);
  const enabled = (level: LogLevel) => LOG_LEVELS.indexOf(level) <= threshold;
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (!enabled(level)) return;
    const time = new Date().toISOString();
    let line = `${time} ${level.toUpperCase().padEnd(5)} ${message}`;
    if (fields && Object.keys(fields).length > 0) line += ` ${safeJson(fields)}`;
    write(scrub(line, secrets));
  };
  return {
    level: options.level,
    error: (m, f) => emit("error", m, f),
    warn: (m, f) => emit("warn", m, f),
    info: (m, f) => emit("info", m, f),
    debug: (m, f) => emit("debug", m, f),
    addSecret: (value) => {
      if (value) secrets.add(value);
    },
    enabled,
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
