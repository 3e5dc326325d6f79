/**
 * A real browser for the HTML report tests: Debian's Chromium, headless, driven by playwright-core
 * (which downloads nothing). Where Chromium is missing, the tests that need it are skipped with the
 * reason and the command that installs it (`BROWSER_SKIP`), so `npm test` on a fresh machine
 * passes and says what it did not run; on CI (`CI=true`, where `.ci/run` installs Chromium) a
 * missing browser fails them instead.
 *
 * @example
 *   const browser = await openBrowser();
 *   const page = await browser.open(pathToFileURL("report.html").href);
 *   assert.deepEqual(page.problems, []);
 *   await browser.close();
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

/** Where Debian's package puts the browser; env CHROMIUM_PATH points elsewhere. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/**
 * The skip reason of every test that opens the browser, where Chromium is missing off CI; false
 * where it can run (or must: on CI).
 *
 * @example
 *   describe("report.html in headless Chromium", { skip: BROWSER_SKIP }, () => {});
 */
export const BROWSER_SKIP: string | false =
  existsSync(CHROMIUM_PATH) || process.env.CI === "true"
    ? false
    : `Chromium is not installed at ${CHROMIUM_PATH}: install it with apt-get install -y --no-install-recommends chromium (bash .ci/run does), or set CHROMIUM_PATH`;

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A page plus everything that went wrong on it: console errors, page errors, network. */
export interface WatchedPage {
  readonly page: Page;
  /** Console errors, uncaught exceptions and any request that left the file (network). */
  readonly problems: string[];
}

/**
 * Waits until the report's table shows `n` matching rows (the page's script renders a moment
 * after typing into the text filter).
 */
export async function waitForMatching(page: Page, test: "=" | "<", n: number): Promise<void> {
  // Polled from here: the page's Content-Security-Policy forbids evaluating strings in it.
  const status = page.locator("#diff-status");
  const deadline = Date.now() + 10_000;
  for (;;) {
    const shown = Number(await status.getAttribute("data-matching"));
    if (test === "=" ? shown === n : shown < n) return;
    if (Date.now() > deadline)
      throw new Error(`the table shows ${shown} matching rows, not ${test} ${n}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface TestBrowser {
  open(url: string): Promise<WatchedPage>;
  close(): Promise<void>;
}

/** Starts Chromium with a fresh profile folder, removed again by `close()`. */
export async function openBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}; the report.html tests need a real browser. Install it with: apt-get install -y --no-install-recommends chromium (bash .ci/run does), or set CHROMIUM_PATH.`,
    );
  }
  const profile = mkdtempSync(join(tmpdir(), "cm-chromium-"));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: FLAGS,
      viewport: { width: 1280, height: 900 },
      timeout: 60_000,
    });
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
  return {
    async open(url) {
      const page = await context.newPage();
      const problems: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(`console error: ${m.text()}`);
      });
      page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
      page.on("request", (r) => {
        if (!r.url().startsWith("file:")) problems.push(`network request: ${r.url()}`);
      });
      page.on("dialog", (d) => {
        problems.push(`dialog: ${d.message()}`);
        void d.dismiss();
      });
      await page.goto(url, { waitUntil: "load" });
      return { page, problems };
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
