/**
 * Text into HTML, safely. Everything shown in report.html comes from the user's database or the
 * platform (ids, errors, control ids), so every value is escaped where it is placed: the `html`
 * tag escapes each interpolation unless it is already `SafeHtml`, and data for the page's script
 * goes through `jsonForScript`. Control and bidi-control characters are shown as visible `\uXXXX`
 * escapes, so an id cannot hide part of itself or reorder the text around it ("Trojan Source").
 */
import { escapeInvisible } from "../../visible-text.ts";

/**
 * Replaces every control and bidi-control character with a visible `\uXXXX` escape (the reports'
 * one rule, `visible-text.ts`).
 *
 * @example
 *   showInvisible("a\u202Eb") // "a\\u202eb"
 */
export const showInvisible = (text: string): string => escapeInvisible(text);

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Escapes text for an HTML element or a quoted attribute, invisible characters made visible.
 *
 * @example
 *   escapeHtml('<b title="x">') // "&lt;b title=&quot;x&quot;&gt;"
 */
export function escapeHtml(text: string): string {
  return showInvisible(text).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

/** Markup that is already safe: built by `html`, or by this module's helpers. */
export class SafeHtml {
  readonly value: string;

  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

type Part = SafeHtml | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(String(part));
}

/**
 * A template tag that escapes every interpolated value (arrays are joined, `SafeHtml` is kept).
 *
 * @example
 *   html`<td>${identityId}</td>` // SafeHtml with the id escaped
 */
export function html(strings: TemplateStringsArray, ...values: readonly Part[]): SafeHtml {
  let out = strings[0] ?? "";
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? "");
  });
  return new SafeHtml(out);
}

/**
 * JSON for a `<script type="application/json">` block: `<`, `>` and `&` are written as `\u003c`,
 * `\u003e`, `\u0026` (so no `</script>` or `<!--` can end the block early), and U+2028/U+2029 too.
 * Strings inside are expected to have gone through `showInvisible` already.
 *
 * @example
 *   jsonForScript(["</script>"]) // '["\\u003c/script\\u003e"]'
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
