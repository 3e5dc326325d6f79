/**
 * Size limits that nothing checks come undone: no source file of the CLI (`src/`) or of the
 * sandbox package (`packages/sandbox/src/`) is over 300 lines, and no function in them is over 80,
 * both measured with the TypeScript compiler API. There is no list of exceptions: a file or a
 * function over its limit is split, and the failure names each with file:line, name and length.
 *
 * How lines are counted: a file's lines are its text split at "\n", a trailing newline not
 * starting a line of its own (what `wc -l` says for a file that ends with one). A function's
 * lines run from the line of its first token (its TSDoc and decorators not included) to the line
 * of its last, both counted. A function is any function declaration, method, constructor,
 * accessor, arrow function or function expression, nested ones measured on their own too.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SOURCE_FOLDERS = ["src", "packages/sandbox/src"];
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;

/** One file or function over its limit, as the failure lists it. */
interface Oversize {
  readonly where: string;
  readonly name: string;
  readonly lines: number;
  readonly limit: number;
}

function* sourceFiles(folder: string): Generator<string> {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (/\.(c|m)?tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) yield path;
  }
}

/** Lines of a text: a trailing newline ends the last line, it does not start another. */
function countLines(text: string): number {
  if (text === "") return 0;
  const lines = text.split("\n").length;
  return text.endsWith("\n") ? lines - 1 : lines;
}

function isFunctionLike(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** A function's name as a reader finds it: its own, or the variable or property it is bound to. */
function functionName(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return "constructor";
  if (node.name !== undefined) return node.name.getText(source);
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) ||
      ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent)) &&
    parent.name !== undefined
  ) {
    return parent.name.getText(source);
  }
  return `(anonymous ${ts.SyntaxKind[node.kind]})`;
}

/** Every file and function of one source text over its limit. */
function oversizeIn(
  path: string,
  text: string,
  limits: { file: number; fn: number } = { file: MAX_FILE_LINES, fn: MAX_FUNCTION_LINES },
): Oversize[] {
  const found: Oversize[] = [];
  const fileLines = countLines(text);
  if (fileLines > limits.file) {
    found.push({ where: path, name: "(file)", lines: fileLines, limit: limits.file });
  }
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: ts.Node): void => {
    if (isFunctionLike(node)) {
      const first = lineOf(node.getStart(source));
      const lines = lineOf(node.getEnd()) - first + 1;
      if (lines > limits.fn) {
        found.push({
          where: `${path}:${first + 1}`,
          name: functionName(node, source),
          lines,
          limit: limits.fn,
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function oversizeInTree(): { files: number; found: Oversize[] } {
  let files = 0;
  const found: Oversize[] = [];
  for (const folder of SOURCE_FOLDERS) {
    for (const file of sourceFiles(join(ROOT, folder))) {
      files += 1;
      found.push(...oversizeIn(relative(ROOT, file), readFileSync(file, "utf8")));
    }
  }
  return { files, found: found.sort((a, b) => b.lines - a.lines) };
}

const describeOversize = (o: Oversize) => `${o.where} ${o.name}: ${o.lines} lines (> ${o.limit})`;

describe("source sizes", () => {
  it("no source file is over 300 lines and no function is over 80 lines", () => {
    const { files, found } = oversizeInTree();
    assert.ok(files > 200, `read ${files} source files`);
    assert.deepEqual(found.map(describeOversize), []);
  });

  it("counts a file's lines without the trailing newline, and a function from its first token to its last", () => {
    assert.equal(countLines(""), 0);
    assert.equal(countLines("a\nb\n"), 2);
    assert.equal(countLines("a\nb"), 2);
    const text = [
      "/** Docs are not the function. */",
      "export function five() {",
      "  const inner = () => {",
      "    return 1;",
      "  };",
      "  return inner();",
      "}",
      "class K {",
      "  get x() {",
      "    return 1;",
      "  }",
      "}",
      "",
    ].join("\n");
    assert.deepEqual(oversizeIn("k.ts", text, { file: 11, fn: 2 }).map(describeOversize), [
      "k.ts (file): 12 lines (> 11)",
      "k.ts:2 five: 6 lines (> 2)",
      "k.ts:3 inner: 3 lines (> 2)",
      "k.ts:9 x: 3 lines (> 2)",
    ]);
  });
});
