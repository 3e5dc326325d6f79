/**
 * The platform client's phase, its one state: `open`; `halted`, when the platform refused for
 * longer than the run's patience (`--max-refused-s`) or asked for a wait past `--max-wait-s`, so
 * every request of the run stops with that refusal as its reason; `closed`, by `close()`. Every
 * component of the client (token manager, HTTP client, patience) listens on `signal`, which the
 * transitions abort, and on the caller's signal (the run's cancel), combined with it.
 */
import type { PlatformError } from "./platform-error.ts";

export type ClientPhase = "open" | "halted" | "closed";

/** Which phase an event leads to: open → halted | closed, halted → closed; closed stays. */
export function nextClientPhase(phase: ClientPhase, event: "halt" | "close"): ClientPhase {
  if (phase === "closed") return "closed";
  return event === "halt" ? "halted" : "closed";
}

/**
 * @example
 *   const life = new ClientLifecycle(options.signal);
 *   const tokens = new TokenManager({ ...config, signal: life.signal, halt: (e) => life.halt(e) });
 *   life.close(); // every wait on life.signal ends
 */
export class ClientLifecycle {
  #phase: ClientPhase = "open";
  readonly #stop = new AbortController();
  /** Aborted when the client halts or closes, or when the caller's signal aborts. */
  readonly signal: AbortSignal;

  constructor(outer?: AbortSignal) {
    this.signal = outer ? AbortSignal.any([this.#stop.signal, outer]) : this.#stop.signal;
  }

  get phase(): ClientPhase {
    return this.#phase;
  }

  /** The platform refused past the run's limits: nothing more goes out, with this reason. */
  halt(error: PlatformError): void {
    this.#on("halt", error);
  }

  close(): void {
    this.#on("close", new Error("platform client closed"));
  }

  // The first reason stays: a closed client's requests say why it halted, if it did.
  #on(event: "halt" | "close", reason: Error): void {
    this.#phase = nextClientPhase(this.#phase, event);
    if (!this.#stop.signal.aborted) this.#stop.abort(reason);
  }
}
