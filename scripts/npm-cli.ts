/**
 * `npm run cli -- ...`: npm starts scripts in the package's folder, so the CLI would write
 * reports, `.data` and relative `--out`/`--data-dir` paths into the repository. This runs it in the
 * folder npm was called from (`INIT_CWD`), as an installed binary would be. (`npm run demo` does the
 * same in `run-demo.mjs`.)
 */
const callerDir = process.env.INIT_CWD;
if (callerDir) process.chdir(callerDir);
await import("../src/cli.ts");
