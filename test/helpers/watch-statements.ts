/**
 * Watches the statements the tool issues, as it built them (a Kysely plugin: nothing is changed),
 * and reads a watched statement's plan with its parameters bound as the tool sent them.
 *
 * @example
 *   const watch = new WatchStatements();
 *   await storeControlDelta(db.withPlugin(watch), delta);
 *   const plan = await planOf(db, watch.last("with"), "analyze, costs off, timing off");
 */
import type {
  Kysely,
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from "kysely";

/** A statement's text as built (a raw statement's fragments), or its node's kind. */
export function textOf(node: RootOperationNode): string {
  return node.kind === "RawNode" ? node.sqlFragments.join(" ").trim() : node.kind;
}

export class WatchStatements implements KyselyPlugin {
  /** Every statement issued through the plugin, in order. */
  readonly nodes: RootOperationNode[] = [];

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.nodes.push(args.node);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  /** The opening words of each statement, in order. */
  get seen(): string[] {
    return this.nodes.map((n) => textOf(n).slice(0, 40));
  }

  /** How many statements were updates (a query builder's, or a raw one). */
  updates(): number {
    return this.nodes.filter((n) => n.kind === "UpdateQueryNode" || /^update /i.test(textOf(n)))
      .length;
  }

  /** The last statement whose text matches `pattern`; throws, naming what was seen, if none. */
  last(pattern: RegExp): RootOperationNode {
    const node = this.nodes.findLast((n) => pattern.test(textOf(n)));
    if (!node) throw new Error(`no statement matched ${pattern}: ${this.seen.join(" | ")}`);
    return node;
  }
}

/**
 * The plan of `node` (`explain (<options>)`) on `db`, one string a line, its parameters bound by
 * position as the tool sent them.
 */
export async function planOf<DB>(
  db: Kysely<DB>,
  node: RootOperationNode,
  options = "costs on",
): Promise<string[]> {
  const q = db.getExecutor().compileQuery(node, { queryId: "explain" } as never);
  const r = await db.executeQuery({ ...q, sql: `explain (${options}) ${q.sql.trim()}` });
  return (r.rows as Record<string, unknown>[]).map((row) => String(Object.values(row)[0]));
}
