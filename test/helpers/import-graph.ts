/**
 * The repository's import graph, read with the TypeScript compiler's own pre-processor (every
 * `import`, `import type`, `export ... from` and dynamic import), and the rules of the layer table
 * (`test/layers.ts`) checked over it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { LAYERS, type Layer, SANDBOX_DOMAIN_FOLDERS } from "../layers.ts";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** File → the repository files it imports, as paths relative to the repository ("src/x/y.ts"). */
export type ImportGraph = Record<string, string[]>;

/** The folders whose TypeScript files make the graph. */
export const GRAPH_FOLDERS = ["src", "migrations", "scripts", "test", "packages/sandbox"];

/** Every `.ts` file under `dir`, `node_modules/` aside. */
export function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    if (entry === "node_modules") continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (path.endsWith(".ts")) yield path;
  }
}

/** Workspace package name → its exports, as repository paths ("controls-sandbox/test-helpers" → ...). */
function workspaceExports(): Map<string, string> {
  const out = new Map<string, string>();
  const dir = "packages/sandbox";
  const manifest = JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8")) as {
    name: string;
    exports: Record<string, string | { default: string }>;
  };
  for (const [sub, target] of Object.entries(manifest.exports)) {
    const spec = sub === "." ? manifest.name : `${manifest.name}/${sub.slice(2)}`;
    // The sources (`default`); `npm test` asks for their compiled twins by a condition.
    out.set(spec, normalize(join(dir, typeof target === "string" ? target : target.default)));
  }
  return out;
}

/** The import graph of every file under {@link GRAPH_FOLDERS}. */
export function importGraph(): ImportGraph {
  const packages = workspaceExports();
  const graph: ImportGraph = {};
  for (const folder of GRAPH_FOLDERS) {
    for (const file of sourceFiles(join(ROOT, folder))) {
      const from = relative(ROOT, file);
      const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
      graph[from] = info.importedFiles.flatMap(({ fileName: spec }) => {
        if (spec.startsWith(".")) return [normalize(join(dirname(from), spec))];
        const target = packages.get(spec);
        return target ? [target] : [];
      });
    }
  }
  return graph;
}

/** The layer a file belongs to: the one with the longest matching path. */
export function layerOf(file: string, layers: readonly Layer[] = LAYERS): Layer | undefined {
  let best: Layer | undefined;
  let length = -1;
  for (const layer of layers) {
    for (const p of layer.paths) {
      const hit = p.endsWith("/") ? file.startsWith(p) : file === p;
      if (hit && p.length > length) [best, length] = [layer, p.length];
    }
  }
  return best;
}

const domainOf = (file: string) => SANDBOX_DOMAIN_FOLDERS.find((d) => file.startsWith(d));

/** Every import that breaks a rule of the table, as "importer → imported: rule". */
export function violations(graph: ImportGraph, layers: readonly Layer[] = LAYERS): string[] {
  const out: string[] = [];
  for (const [from, imports] of Object.entries(graph)) {
    const mine = layerOf(from, layers);
    if (!mine) {
      out.push(`${from}: belongs to no layer of test/layers.ts`);
      continue;
    }
    for (const to of imports) {
      const theirs = layerOf(to, layers);
      const refuse = (rule: string) => out.push(`${from} → ${to}: ${rule}`);
      if (!theirs) refuse("imports a file of no layer");
      else if (theirs !== mine) {
        if (!mine.mayImport.includes(theirs.name))
          refuse(`${mine.name} may not import ${theirs.name}`);
        else if (
          theirs.entries &&
          !theirs.entries.includes(to) &&
          !mine.seesInternals?.includes(theirs.name)
        ) {
          refuse(`${theirs.name} is entered only through ${theirs.entries.join(", ")}`);
        }
      }
      const [a, b] = [domainOf(from), domainOf(to)];
      if (a && b && a !== b) refuse(`sandbox domain ${a} imports another domain (${b})`);
    }
  }
  return out;
}

/**
 * Every circle of files (a strongly connected component of more than one file, or a file
 * importing itself), each as its files in sorted order: "a ↔ b ↔ c".
 */
export function circles(graph: ImportGraph): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph[v] ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph[v] ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of Object.keys(graph).sort()) if (!index.has(v)) visit(v);
  return found.map((c) => c.join(" ↔ ")).sort();
}
