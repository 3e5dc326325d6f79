/**
 * Commands the product no longer has, and where they went: the sandbox and the demo need the
 * sandbox at run time, and the published CLI does not carry it (issue 31).
 */
const RETIRED: Readonly<Record<string, string>> = Object.freeze({
  sandbox:
    "sandbox is no longer a controls-migrate command: the sandbox is its own program. In the controls-migrate repository run `npx controls-sandbox` (flags: --help); `sandbox --from-db` is `npm run sandbox:from-db`.",
  demo: "demo is no longer a controls-migrate command: in the controls-migrate repository run `npm run demo` (same flags).",
});

/**
 * Where a retired command went, when the command line starts with one.
 *
 * @example
 *   retiredCommandHint(["demo", "--keep"]); // "demo is no longer a controls-migrate command: ..."
 *   retiredCommandHint(["plan"]); // undefined
 */
export function retiredCommandHint(args: readonly string[]): string | undefined {
  const first = args[0];
  return first !== undefined && Object.hasOwn(RETIRED, first) ? RETIRED[first] : undefined;
}
