/**
 * A TCP proxy in front of a PostgreSQL server, on 127.0.0.1, that can lose the answer to a COMMIT
 * or to a statement of its own (it forwards it, lets the server commit, then drops the connection
 * instead of passing the server's answer on) and can refuse new connections for a while. The one fault a retry must not get wrong (the work is done, the client cannot
 * know), made exact. Reads just enough of the wire protocol to spot the statement.
 *
 * @example
 *   const proxy = await startFaultProxy(serverUrl);
 *   proxy.loseNextCommitAnswer();
 *   await db.transaction().execute(...); // via proxy.url
 *   await proxy.close();
 */
import { connect, createServer, type Socket } from "node:net";

export interface FaultProxy {
  /** `serverUrl` with its host and port replaced by the proxy's. */
  readonly url: string;
  /** The next COMMIT sent through the proxy is committed, and its answer never arrives. */
  loseNextCommitAnswer(): void;
  /**
   * The next statement whose text matches `pattern` is run (and, outside a transaction,
   * committed), and its answer never arrives.
   */
  loseNextAnswerTo(pattern: RegExp): void;
  /** Answers lost so far. */
  readonly lostCommits: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** The statements sent so far (simple Query or Parse), in order. */
  readonly statements: readonly string[];
  /** While false, new connections are dropped at once (the server looks unreachable). */
  setAccepting(accepting: boolean): void;
  close(): Promise<void>;
}

export async function startFaultProxy(serverUrl: string): Promise<FaultProxy> {
  const target = new URL(serverUrl);
  let armed: RegExp | null = null;
  let lost = 0;
  let accepting = true;
  let connections = 0;
  const statements: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    if (!accepting) {
      client.destroy();
      return;
    }
    connections += 1;
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    let started = false;
    let dropOnAnswer = false;
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      // Startup has no type byte; every later message is type + int32 length + body.
      for (;;) {
        const header = started ? 5 : 4;
        if (pending.length < header) break;
        const len = pending.readInt32BE(started ? 1 : 0) + (started ? 1 : 0);
        if (pending.length < len) break;
        const message = pending.subarray(0, len);
        pending = pending.subarray(len);
        const statement = started ? statementOf(message) : null;
        if (statement !== null) statements.push(statement);
        if (started && armed && statement?.match(armed)) {
          armed = null;
          dropOnAnswer = true;
        }
        started = true;
        upstream.write(message);
      }
    });
    upstream.on("data", (chunk) => {
      if (dropOnAnswer) {
        lost += 1;
        drop();
        return;
      }
      client.write(chunk);
    });
    for (const s of [client, upstream]) {
      s.on("error", drop);
      s.on("close", () => {
        sockets.delete(s);
        drop();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  const url = new URL(serverUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    loseNextCommitAnswer: () => {
      armed = /^commit$/i;
    },
    loseNextAnswerTo: (pattern) => {
      armed = pattern;
    },
    get lostCommits() {
      return lost;
    },
    get connections() {
      return connections;
    },
    statements,
    setAccepting: (value) => {
      accepting = value;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** The statement of a simple Query ('Q') or a Parse ('P'), trimmed; null for other messages. */
function statementOf(message: Buffer): string | null {
  const type = String.fromCharCode(message[0]!);
  let text: string;
  if (type === "Q") text = message.subarray(5).toString("utf8");
  else if (type === "P") {
    const body = message.subarray(5);
    const nameEnd = body.indexOf(0);
    text = body.subarray(nameEnd + 1).toString("utf8");
  } else return null;
  return text.split("\0")[0]!.trim();
}
