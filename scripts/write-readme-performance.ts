/**
 * Rewrites docs/performance.md's figures from the latest complete run in
 * bench-results/results.jsonl (`npm run docs:performance`, after `npm run bench -- --only a,c,i,j`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
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
const run = latestRun(parseResults(text));
writeFileSync(
  target,
  replacePerformanceBlock(readFileSync(target, "utf8"), renderPerformance(run)),
);
const started = [...run.values()][0]?.run_started_at;
process.stdout.write(`docs/performance.md rewritten from the run started ${started}.\n`);
