/**
 * Refreshes the docs' pictures under reports/screenshots/ (`npm run docs:screenshots`): runs the
 * headless-Chromium tests of report.html with env CONTROLS_TEST_SCREENSHOTS pointing at a
 * temporary folder, then copies the pictures the docs show:
 * - `report-html-*.png`: the crafted world's plan, apply, reconcile and filtered diff table
 *   (`test/e2e/reports.report-html.test.ts`);
 * - `report-html-story-apply.png`, `report-html-story-reconcile.png`: an apply paused, continued
 *   and given a new rate, then a reconcile, at 1,280 px (`test/e2e/reports.report-html-story.test.ts`,
 *   on PostgreSQL when TEST_DATABASE_URL is set, else on PGlite).
 * `npm test` never writes here: without that env var the tests keep their screenshots in a
 * temporary folder they remove.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const shots = fileURLToPath(new URL("../reports/screenshots/", import.meta.url));
const tests = [
  "test/e2e/reports.report-html.test.ts",
  "test/e2e/reports.report-html-story.test.ts",
];
const taken = mkdtempSync(join(tmpdir(), "cm-docs-screenshots-"));
try {
  const run = spawnSync(process.execPath, ["--test", ...tests], {
    cwd: root,
    env: { ...process.env, CONTROLS_TEST_SCREENSHOTS: taken },
    stdio: "inherit",
  });
  if (run.status !== 0) {
    process.stderr.write(
      `docs:screenshots: ${tests.join(", ")} failed (exit ${run.status ?? run.signal}).\n`,
    );
    process.exit(1);
  }
  for (const f of readdirSync(taken).filter((n) => n.startsWith("report-html-"))) {
    copyFileSync(join(taken, f), join(shots, f));
  }
  const backend = existsSync(join(taken, "postgres-apply-1280.png")) ? "postgres" : "pglite";
  copyFileSync(
    join(taken, `${backend}-apply-1280.png`),
    join(shots, "report-html-story-apply.png"),
  );
  copyFileSync(
    join(taken, `${backend}-reconcile-1280.png`),
    join(shots, "report-html-story-reconcile.png"),
  );
  process.stdout.write(`reports/screenshots/ refreshed (the story on ${backend}).\n`);
} finally {
  rmSync(taken, { recursive: true, force: true });
}
