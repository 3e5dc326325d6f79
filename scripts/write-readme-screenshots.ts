/**
 * Refreshes the README's pictures under reports/screenshots/ (`npm run docs:screenshots`): runs
 * the headless-Chromium test of report.html with env CONTROLS_TEST_SCREENSHOTS pointing there.
 * `npm test` never writes them: without that env var the test keeps its screenshots in a
 * temporary folder it removes.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const shots = fileURLToPath(new URL("../reports/screenshots/", import.meta.url));
const test = "test/e2e/reports.report-html.test.ts";
const run = spawnSync(process.execPath, ["--import", "tsx", "--test", test], {
  cwd: root,
  env: { ...process.env, CONTROLS_TEST_SCREENSHOTS: shots },
  stdio: "inherit",
});
if (run.status !== 0) {
  process.stderr.write(`docs:screenshots: ${test} failed (exit ${run.status ?? run.signal}).\n`);
  process.exit(1);
}
process.stdout.write("reports/screenshots/ refreshed from the demo's report.html.\n");
