#!/usr/bin/env node
// The sandbox ships as TypeScript sources inside this repository (it is never published), so its
// bin registers tsx and runs them. Under the CLI's compiled suite (`node
// --conditions=controls-migrate-suite`), the package's entry is the suite's one-file bundle
// (`scripts/bundle-sandbox.mjs`), which needs no tsx.
const entry = import.meta.resolve("controls-sandbox");
let main;
if (entry.endsWith(".ts")) {
  const { register } = await import("tsx/esm/api");
  register();
  main = await import("../src/cli/main.ts");
} else main = await import(entry);
process.exitCode = await main.runSandboxCli(process.argv.slice(2));
