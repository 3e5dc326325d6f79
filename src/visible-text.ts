/**
 * Characters that make a terminal or an editor show something other than the text: C0 and C1
 * control characters (ESC starts terminal escape sequences, BEL rings, CR rewrites the line), DEL,
 * and the Unicode bidirectional controls (overrides U+202A–U+202E, isolates U+2066–U+2069, and the
 * marks U+061C, U+200E, U+200F) that reorder what is displayed ("Trojan Source"). Ids come from
 * the user's database and the platform; the reports must show them as they are.
 */

/** The Unicode Bidi_Control characters. */
export const BIDI_CONTROL = /\p{Bidi_Control}/u;

const UNSAFE = /[\u0000-\u001f\u007f-\u009f]|\p{Bidi_Control}/gu;
const UNSAFE_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]|\p{Bidi_Control}/gu;

const asEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * Replaces every control and bidi-control character with a visible `\uXXXX` escape.
 * `keepNewlines` leaves `\n` alone, for multi-line text such as Markdown.
 *
 * @example
 *   escapeInvisible("ab\u001b[31mc") // "ab\\u001b[31mc"
 *   escapeInvisible("x\u202Ey") // "x\\u202ey"
 */
export function escapeInvisible(text: string, options: { keepNewlines?: boolean } = {}): string {
  return text.replace(options.keepNewlines ? UNSAFE_BUT_NEWLINE : UNSAFE, asEscape);
}
