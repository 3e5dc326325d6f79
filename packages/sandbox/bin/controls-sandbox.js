#!/usr/bin/env node
// The sandbox ships as TypeScript sources inside this repository (it is never published), so its
// bin registers tsx and runs them.
import { register } from "tsx/esm/api";

register();
const { runSandboxCli } = await import("../src/cli/main.ts");
process.exitCode = await runSandboxCli(process.argv.slice(2));
