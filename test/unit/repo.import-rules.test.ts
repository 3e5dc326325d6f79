/**
 * The import rules of ARCHITECTURE.md, checked over the TypeScript import graph of `src/` (every
 * `import`, `import type`, `export ... from` and dynamic import, as TypeScript's own pre-processor
 * reads them). A new import that breaks a rule fails here with the file and the import.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** File → the project files it imports, as paths relative to the repository ("src/x/y.ts"). */
export type ImportGraph = Record<string, string[]>;

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (path.endsWith(".ts")) yield path;
  }
}

function importGraph(): ImportGraph {
  const graph: ImportGraph = {};
  for (const file of sourceFiles(join(ROOT, "src"))) {
    const from = relative(ROOT, file);
    const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    graph[from] = info.importedFiles
      .map((f) => f.fileName)
      .filter((spec) => spec.startsWith("."))
      .map((spec) => normalize(join(dirname(from), spec)));
  }
  return graph;
}

const SANDBOX_DOMAINS = [
  "identity",
  "exchange",
  "transfer",
  "deposit-address",
  "orchestration",
  "admin",
];
const SANDBOX_LAYERS = ["gateway", "paging", "input", "oauth"];

const sandboxPart = (path: string) =>
  path.startsWith("src/sandbox/") ? path.split("/")[2] : undefined;

/** Every import that breaks a rule, as "importer → imported: rule". */
export function violations(graph: ImportGraph): string[] {
  const out: string[] = [];
  const refuse = (from: string, to: string, rule: string) => out.push(`${from} → ${to}: ${rule}`);
  for (const [from, imports] of Object.entries(graph)) {
    for (const to of imports) {
      if (from.startsWith("src/sandbox/")) {
        const allowed =
          to.startsWith("src/sandbox/") ||
          to === "src/synthetic.ts" ||
          to.startsWith("src/contract/");
        if (!allowed)
          refuse(
            from,
            to,
            "the sandbox imports nothing of the tool but synthetic.ts and contract/",
          );
        const mine = sandboxPart(from);
        const theirs = sandboxPart(to);
        if (
          mine &&
          SANDBOX_DOMAINS.includes(mine) &&
          theirs &&
          theirs !== mine &&
          SANDBOX_DOMAINS.includes(theirs)
        ) {
          refuse(from, to, `sandbox domain ${mine}/ imports another domain (${theirs}/)`);
        }
        if (mine && SANDBOX_LAYERS.includes(mine) && theirs && SANDBOX_DOMAINS.includes(theirs)) {
          refuse(from, to, `sandbox ${mine}/ serves every domain and imports none (${theirs}/)`);
        }
      }
      if (from.startsWith("src/migration/") && to.startsWith("src/sandbox/")) {
        refuse(from, to, "migration/ never imports the sandbox");
      }
      if (from.startsWith("src/platform/") && to.startsWith("src/db/")) {
        refuse(from, to, "platform/ knows nothing of the database");
      }
      if (from.startsWith("src/db/") && to.startsWith("src/platform/")) {
        refuse(from, to, "db/ knows nothing of HTTP");
      }
      if (from.startsWith("src/contract/") && !to.startsWith("src/contract/")) {
        refuse(from, to, "contract/ is a leaf: the platform's constants, importing nothing");
      }
    }
  }
  return out;
}

describe("import rules", () => {
  it("holds for every import of src/", () => {
    const graph = importGraph();
    assert.ok(Object.keys(graph).length > 80, "the graph covers src/");
    assert.deepEqual(violations(graph), []);
  });

  it("names the import that breaks a rule: a domain importing another, the sandbox importing the tool, migration importing the sandbox, platform and db importing each other", () => {
    const found = violations({
      "src/sandbox/identity/x.ts": [
        "src/sandbox/exchange/y.ts",
        "src/sandbox/paging/keyset-index.ts",
      ],
      "src/sandbox/paging/z.ts": ["src/sandbox/identity/x.ts"],
      "src/sandbox/app.ts": ["src/config.ts", "src/synthetic.ts", "src/contract/limits.ts"],
      "src/migration/pipeline.ts": ["src/sandbox/index.ts"],
      "src/platform/http-client.ts": ["src/db/connect.ts"],
      "src/db/connect.ts": ["src/platform/types.ts"],
    });
    assert.deepEqual(found, [
      "src/sandbox/identity/x.ts → src/sandbox/exchange/y.ts: sandbox domain identity/ imports another domain (exchange/)",
      "src/sandbox/paging/z.ts → src/sandbox/identity/x.ts: sandbox paging/ serves every domain and imports none (identity/)",
      "src/sandbox/app.ts → src/config.ts: the sandbox imports nothing of the tool but synthetic.ts and contract/",
      "src/migration/pipeline.ts → src/sandbox/index.ts: migration/ never imports the sandbox",
      "src/platform/http-client.ts → src/db/connect.ts: platform/ knows nothing of the database",
      "src/db/connect.ts → src/platform/types.ts: db/ knows nothing of HTTP",
    ]);
  });
});
