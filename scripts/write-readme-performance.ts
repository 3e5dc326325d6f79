/**
 * Rewrites docs/performance.md's figures from bench-results/results.jsonl
 * (`npm run docs:performance`): the plan, memory and apply figures from the latest run of
 * `npm run bench -- --only a,c,i,j`, and the start-up and scale figures from the latest runs of
 * scenarios k and l (`npm run bench -- --only k,l`), and every command at three sizes from the
 * latest run of scenario s (`npm run bench -- --only s`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  COMMAND_SCALE_MARKERS,
  latestCommandScale,
  renderCommandScale,
} from "../test/bench/command-scale-doc.ts";
import {
  latestOfEach,
  renderStartupAndScale,
  replaceBlock,
  STARTUP_SCALE_MARKERS,
} from "../test/bench/performance-startup-scale.ts";
import {
  latestRun,
  parseResults,
  renderPerformance,
  replacePerformanceBlock,
} from "../test/bench/readme-performance.ts";

const target = fileURLToPath(new URL("../docs/performance.md", import.meta.url));
const results = fileURLToPath(new URL("../bench-results/results.jsonl", import.meta.url));
let text: string;
try {
  text = readFileSync(results, "utf8");
} catch {
  process.stderr.write(
    "bench-results/results.jsonl not found: run npm run bench -- --only a,c,i,j first\n",
  );
  process.exit(1);
}
const lines = parseResults(text);
let doc = readFileSync(target, "utf8");
// Each block from its own runs; a block whose runs results.jsonl lacks stays as it is, said so.
const blocks: [string, () => string][] = [
  [
    "plans, memory and applies",
    () => replacePerformanceBlock(doc, renderPerformance(latestRun(lines))),
  ],
  [
    "start-up and scale",
    () => replaceBlock(doc, renderStartupAndScale(latestOfEach(lines)), STARTUP_SCALE_MARKERS),
  ],
  [
    "every command at three sizes",
    () => replaceBlock(doc, renderCommandScale(latestCommandScale(lines)), COMMAND_SCALE_MARKERS),
  ],
];
let kept = 0;
for (const [name, rewrite] of blocks) {
  try {
    doc = rewrite();
    process.stdout.write(`docs/performance.md: ${name} rewritten.\n`);
  } catch (err) {
    kept += 1;
    process.stderr.write(
      `docs/performance.md: ${name} kept as it was: ${(err as Error).message}\n`,
    );
  }
}
writeFileSync(target, doc);
if (kept === blocks.length) process.exit(1);
