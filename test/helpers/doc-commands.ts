/**
 * The `controls-migrate` command lines a markdown file shows: in its fenced shell blocks (sh,
 * bash, shell, console, cron), in its inline code, and in the first column of a command table.
 * Pure; `test/integration/docs.commands.test.ts` checks each against the CLI's own options.
 */

/** One command line as a document shows it. */
export interface DocCommand {
  /** `README.md:84`, for the failure message. */
  readonly where: string;
  /** The command (`plan`, `db seed`), as typed after `controls-migrate`; "" for flags alone. */
  readonly command: string;
  /** The flags it gives, without dashes, `--no-x` as `no-x`. */
  readonly flags: readonly string[];
  readonly text: string;
}

const SHELL_BLOCKS = new Set(["sh", "bash", "shell", "console", "cron"]);
/** Where a command line stops: a comment, a pipe, a list, a redirection, a subshell's end. */
const STOP = /\s(?:#|\||&&|;|[12]?>|<)|[;)`]|\$\(/;
const INVOCATION = /(?:^|[\s;&|(]|\$ )controls-migrate((?:\s+[^\s;|&)`#<>]+)*)/g;

/**
 * Command lines of `markdown`, read as named `file`.
 *
 * @example
 *   docCommands("```sh\ncontrols-migrate plan --out x\n```", "README.md")
 *   // [{ where: "README.md:2", command: "plan", flags: ["out"], text: "controls-migrate plan --out x" }]
 */
export function docCommands(markdown: string, file: string): DocCommand[] {
  const out: DocCommand[] = [];
  const lines = markdown.split("\n");
  let fence: string | null = null;
  let section = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const opened = /^```(\w*)/.exec(line);
    if (opened) {
      fence = fence === null ? opened[1]! : null;
      continue;
    }
    const where = `${file}:${i + 1}`;
    if (fence !== null) {
      if (!SHELL_BLOCKS.has(fence)) continue;
      // A line continued with a backslash is one command line.
      let text = line;
      while (text.endsWith("\\") && i + 1 < lines.length) {
        text = `${text.slice(0, -1)} ${lines[++i]}`;
      }
      out.push(...invocations(text, where));
      continue;
    }
    section = /^## (.*)/.exec(line)?.[1] ?? section;
    out.push(...tableRow(line, section, where));
    for (const code of line.matchAll(/`(controls-migrate [^`]+)`/g)) {
      out.push(...invocations(code[1]!, where));
    }
  }
  return out;
}

/** A "Commands" table's row: each command its first cell names (`plan`, `db seed --identities N`). */
function tableRow(line: string, section: string, where: string): DocCommand[] {
  if (section !== "Commands" || !line.startsWith("| `")) return [];
  const cell = line.split(" | ")[0] ?? "";
  return [...cell.matchAll(/`([^`]+)`/g)]
    .map((m) => m[1]!)
    .filter((c) => !c.startsWith("-"))
    .flatMap((c) => invocations(`controls-migrate ${c}`, where));
}

/** The invocations on one line of shell. */
function invocations(text: string, where: string): DocCommand[] {
  const found: DocCommand[] = [];
  // `<run-id>` is a placeholder, not a redirection.
  const line = text.replace(/<([a-z][a-z-]*)>/g, "$1");
  for (const m of line.matchAll(INVOCATION)) {
    const rest = (m[1] ?? "").split(STOP)[0] ?? "";
    const words = rest.trim().split(/\s+/).filter(Boolean);
    const first = words[0];
    if (first === undefined) continue;
    // `controls-migrate --version`: a top-level flag, checked against the top-level help.
    const top = first.startsWith("-");
    if (!top && !/^[a-z][a-z-]*$/.test(first)) continue;
    const sub = words[1];
    const command = top ? "" : first === "db" && sub && !sub.startsWith("-") ? `db ${sub}` : first;
    const flags = words
      .map((w) => w.replace(/^\[+/, ""))
      .filter((w) => /^--[a-z]/.test(w))
      .map((w) =>
        w
          .slice(2)
          .split(/[=\]]/)[0]!
          .replace(/^\[no-\]/, ""),
      );
    found.push({ where, command, flags, text: `controls-migrate${rest}`.trim() });
  }
  return found;
}
