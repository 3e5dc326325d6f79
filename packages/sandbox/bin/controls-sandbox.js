#!/usr/bin/env node
// The sandbox ships as TypeScript sources inside this repository (it is never published); node
// (22.18 or later) strips their types as it loads them.
const { runSandboxCli } = await import("../src/cli/main.ts");
process.exitCode = await runSandboxCli(process.argv.slice(2));
