/**
 * `controls-sandbox`: the sandbox's own command line. Flags come from its options table; a
 * refusal prints one message naming the flag and exits 1; SIGINT or SIGTERM stops it with exit 0.
 */
import yargs from "yargs";
import { withOptions } from "../shared.ts";
import { SandboxUsageError, sandboxOptions, sandboxOptionsFromArgv } from "./options.ts";
import { serveSandbox } from "./serve.ts";

/** Adds the sandbox's flags, examples and epilogue to a yargs instance. */
export function sandboxYargs(args: readonly string[]) {
  return withOptions(
    yargs([...args])
      .scriptName("controls-sandbox")
      .parserConfiguration({ "camel-case-expansion": false, "parse-numbers": false })
      .strict()
      .help()
      .version(false),
    sandboxOptions,
    "Sandbox options:",
  )
    .example(
      "$0 --identities 100000",
      "100,000 synthetic identities, half of the flagged ones migrated",
    )
    .example(
      "$0 --port 0 --rate-limit 0 --token-rate-limit 0",
      "A free port, no rate limits (benchmarks)",
    )
    .example(
      "$0 --identities 10000 --drift-fraction 0.05 --fail-rate 0.02 --ambiguous-rate 0.01 --latency-ms 20",
      "Drifted data and a flaky platform",
    )
    .example(
      "$0 --identities 100000 --updated-at-policy identity-fields",
      "A platform whose updated_at misses control changes, to rehearse reads of only what changed",
    )
    .epilogue(
      "Prints one JSON line on stdout (api_url, token_url, admin_url, client ids and secrets) once ready, then ready-to-paste export lines (API_BASE_URL, OAUTH_TOKEN_URL, OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET) on stderr; logs go to stderr. Stops on SIGINT/SIGTERM with exit code 0. To serve the identities of your own source relation, run `npm run sandbox:from-db` in the repository.",
    );
}

/** Stops on the first SIGINT or SIGTERM. */
export function stopSignal(): AbortSignal {
  const controller = new AbortController();
  for (const name of ["SIGINT", "SIGTERM"] as const) {
    process.once(name, () => controller.abort());
  }
  return controller.signal;
}

/** Runs the command line to its end and returns the exit code. */
export async function runSandboxCli(args: readonly string[]): Promise<number> {
  try {
    const argv = await sandboxYargs(args)
      .fail((message, err) => {
        throw err ?? new SandboxUsageError(message);
      })
      .parseAsync();
    await serveSandbox(sandboxOptionsFromArgv(argv), { signal: stopSignal() });
    return 0;
  } catch (err) {
    if (err instanceof SandboxUsageError) {
      process.stderr.write(`controls-sandbox: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`controls-sandbox: ${(err as Error).stack ?? String(err)}\n`);
    return 2;
  }
}
