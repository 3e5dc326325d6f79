import type { SeedIdentity } from "../identity/types.ts";
import { startSandbox } from "../start-sandbox.ts";
import type { Sandbox } from "../types.ts";
import { type SandboxCliOptions, SandboxUsageError } from "./options.ts";

/** A line on stderr: the message, then its fields as JSON. Never given a secret. */
export type SandboxLog = (message: string, fields?: Record<string, unknown>) => void;

/** Writes log lines to stderr. */
export const stderrLog: SandboxLog = (message, fields) => {
  process.stderr.write(`${message}${fields ? ` ${JSON.stringify(fields)}` : ""}\n`);
};

const shellQuote = (v: string) => `'${v.replaceAll("'", "'\\''")}'`;

/**
 * Ready-to-paste shell lines that point controls-migrate at this sandbox. They carry the sandbox's
 * own throwaway client secret, as the JSON line on stdout does; nothing else is logged with it.
 */
export function exportLines(sandbox: Sandbox): string {
  return [
    "# To point controls-migrate at this sandbox, paste:",
    `export API_BASE_URL=${shellQuote(sandbox.apiUrl)}`,
    `export OAUTH_TOKEN_URL=${shellQuote(sandbox.tokenUrl)}`,
    `export OAUTH_CLIENT_ID=${shellQuote(sandbox.credentials.clientId)}`,
    `export OAUTH_CLIENT_SECRET=${shellQuote(sandbox.credentials.clientSecret)}`,
    "",
  ].join("\n");
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

async function listen(options: SandboxCliOptions): Promise<Sandbox> {
  try {
    return await startSandbox(options);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
      throw new SandboxUsageError(
        `--host ${options.host} --port ${options.port} cannot be bound (${code}); pick another --port, or --port 0 for any free one.`,
      );
    }
    throw err;
  }
}

/**
 * Starts the sandbox, seeds `identities` (rows read elsewhere, e.g. a source relation) if given,
 * prints the ready line (stdout) and export lines (stderr), serves until `signal` aborts, then
 * closes. Refusals are `SandboxUsageError`s naming the flag.
 *
 * @example
 *   await serveSandbox(sandboxOptionsFromArgv({ port: "0" }), { signal });
 */
export async function serveSandbox(
  options: SandboxCliOptions,
  run: { signal: AbortSignal; identities?: readonly SeedIdentity[]; log?: SandboxLog },
): Promise<void> {
  const log = run.log ?? stderrLog;
  if (run.identities && options.identities > 0) {
    throw new SandboxUsageError(
      "--from-db and --identities are exclusive: seed from one or the other.",
    );
  }
  if (options.identities > 0) {
    log(`seeding ${options.identities} synthetic identities (seed ${options.seed})`);
  }
  const sandbox = await listen(options);
  if (run.identities) {
    const report = sandbox.seedIdentities([...run.identities]);
    log("seeded identities from the database", { ...report });
  }
  const stats = sandbox.stats();
  // A local emulator printing its own throwaway secrets on stdout is intended: callers read them.
  process.stdout.write(
    `${JSON.stringify({
      api_url: sandbox.apiUrl,
      token_url: sandbox.tokenUrl,
      admin_url: sandbox.adminUrl,
      client_id: sandbox.credentials.clientId,
      client_secret: sandbox.credentials.clientSecret,
      read_only_client_id: sandbox.credentials.readOnlyClientId,
      read_only_client_secret: sandbox.credentials.readOnlyClientSecret,
    })}\n`,
  );
  process.stderr.write(exportLines(sandbox));
  log(`sandbox listening on ${sandbox.apiUrl} (admin ${sandbox.adminUrl})`, {
    identities: stats.identities,
    active_controls: stats.controls.active,
  });
  await untilAborted(run.signal);
  await sandbox.close();
  log("sandbox stopped");
}
