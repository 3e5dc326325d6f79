/**
 * `npm run cli -- ...` (and `npm run demo`): npm starts scripts in the package's folder, so the
 * CLI would write reports, `.data` and relative `--out`/`--data-dir` paths into the repository.
 * This runs it in the folder npm was called from (`INIT_CWD`), as an installed binary would be.
 */
const callerDir = process.env.INIT_CWD;
if (callerDir) process.chdir(callerDir);
// npm names the script it runs: `demo` is the repository's rehearsal script, the rest the CLI.
await import(process.env.npm_lifecycle_event === "demo" ? "./demo.ts" : "../src/cli.ts");
