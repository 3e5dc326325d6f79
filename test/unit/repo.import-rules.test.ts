/**
 * The layer table (`test/layers.ts`) checked over the repository's TypeScript import graph: every
 * import is one the table allows, parts with entry files are entered only through them, a sandbox
 * domain never imports another, no files import each other in a circle, and ARCHITECTURE.md shows
 * the table as it is. A new import that breaks a rule fails here with the file and the import.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { circles, importGraph, layerOf, ROOT, violations } from "../helpers/import-graph.ts";
import { LAYERS, renderLayersTable, TABLE_END, TABLE_START } from "../layers.ts";

const graph = importGraph();

describe("the layer table and the import graph", () => {
  it("reads every TypeScript file of the CLI, the sandbox package, the scripts and the tests", () => {
    const files = Object.keys(graph);
    for (const must of [
      "src/cli.ts",
      "src/contract/index.ts",
      "packages/sandbox/src/index.ts",
      "packages/sandbox/src/shared.ts",
      "scripts/demo.ts",
      "test/unit/repo.import-rules.test.ts",
    ]) {
      assert.ok(files.includes(must), `the graph holds ${must}`);
    }
    assert.ok(files.length > 300, `${files.length} files`);
    assert.ok(
      graph["scripts/demo.ts"]?.includes("packages/sandbox/src/index.ts"),
      "an import of the package name controls-sandbox resolves to its entry file",
    );
  });

  it("holds for every import: allowed layers only, entry files only, no domain into another", () => {
    assert.deepEqual(violations(graph), []);
  });

  it("has no circle of files", () => {
    assert.deepEqual(circles(graph), []);
  });

  it("names only layers it defines, and paths that exist", () => {
    const names = new Set(LAYERS.map((l) => l.name));
    assert.equal(names.size, LAYERS.length, "layer names are unique");
    for (const layer of LAYERS) {
      for (const n of [...layer.mayImport, ...(layer.seesInternals ?? [])]) {
        assert.ok(names.has(n), `${layer.name} names ${n}`);
      }
      for (const p of [...layer.paths, ...(layer.entries ?? [])]) {
        assert.ok(existsSync(join(ROOT, p)), `${layer.name}: ${p} exists`);
      }
      for (const e of layer.entries ?? []) {
        assert.equal(layerOf(e), layer, `${e} is a file of ${layer.name}`);
      }
    }
  });

  it("lets no layer of the CLI package import back up: its may-import relation has no circle", () => {
    const cli = LAYERS.filter((l) => !l.paths.some((p) => p.startsWith("packages/")));
    assert.ok(cli.length > 8);
    const asGraph = Object.fromEntries(cli.map((l) => [l.name, [...l.mayImport]]));
    assert.deepEqual(circles(asGraph), []);
  });

  it("is the table ARCHITECTURE.md shows (regenerate with npm run docs:layers)", () => {
    const doc = readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");
    const start = doc.indexOf(TABLE_START);
    const end = doc.indexOf(TABLE_END);
    assert.ok(start >= 0 && end > start, "ARCHITECTURE.md holds the markers");
    assert.equal(doc.slice(start + TABLE_START.length, end).trim(), renderLayersTable());
  });
});

describe("the import rules, on a made-up graph", () => {
  it("names each import that breaks a rule: a layer not allowed, an entry bypassed, a domain into another", () => {
    const found = violations({
      "packages/sandbox/src/identity/x.ts": [
        "packages/sandbox/src/exchange/y.ts",
        "packages/sandbox/src/paging/keyset-index.ts",
      ],
      "packages/sandbox/src/paging/z.ts": ["packages/sandbox/src/identity/x.ts"],
      "packages/sandbox/src/app.ts": ["src/config.ts", "packages/sandbox/src/shared.ts"],
      "packages/sandbox/src/shared.ts": ["src/contract/limits.ts", "src/config/option-kit.ts"],
      "src/migration/run/pipeline.ts": [
        "packages/sandbox/src/index.ts",
        "src/platform/http-client.ts",
      ],
      "src/platform/http-client.ts": ["src/db/connection/connect.ts"],
      "src/db/connection/connect.ts": ["src/platform/index.ts"],
      "src/config/command-options.ts": ["src/platform/types.ts"],
      "test/e2e/x.test.ts": ["packages/sandbox/src/app.ts", "src/platform/http-client.ts"],
      "elsewhere/x.ts": [],
    });
    assert.deepEqual(found, [
      "packages/sandbox/src/identity/x.ts → packages/sandbox/src/exchange/y.ts: sandbox domain packages/sandbox/src/identity/ imports another domain (packages/sandbox/src/exchange/)",
      "packages/sandbox/src/paging/z.ts → packages/sandbox/src/identity/x.ts: sandbox-layers may not import sandbox-domains",
      "packages/sandbox/src/app.ts → src/config.ts: sandbox-core may not import config",
      "packages/sandbox/src/shared.ts → src/contract/limits.ts: contract is entered only through src/contract/index.ts",
      "src/migration/run/pipeline.ts → packages/sandbox/src/index.ts: migration may not import sandbox",
      "src/migration/run/pipeline.ts → src/platform/http-client.ts: platform is entered only through src/platform/index.ts",
      "src/platform/http-client.ts → src/db/connection/connect.ts: platform may not import db",
      "src/db/connection/connect.ts → src/platform/index.ts: db may not import platform",
      "src/config/command-options.ts → src/platform/types.ts: config may not import platform",
      "test/e2e/x.test.ts → packages/sandbox/src/app.ts: tests may not import sandbox-core",
      "elsewhere/x.ts: belongs to no layer of test/layers.ts",
    ]);
  });

  it("finds a circle of two files and one of three, and no circle in a chain", () => {
    assert.deepEqual(
      circles({
        "a.ts": ["b.ts"],
        "b.ts": ["a.ts"],
        "c.ts": ["d.ts"],
        "d.ts": ["e.ts"],
        "e.ts": ["c.ts", "f.ts"],
        "f.ts": [],
      }),
      ["a.ts ↔ b.ts", "c.ts ↔ d.ts ↔ e.ts"],
    );
    assert.deepEqual(circles({ "a.ts": ["b.ts"], "b.ts": ["c.ts"], "c.ts": [] }), []);
  });
});
