/**
 * A daily window of local time, `HH:MM-HH:MM`, that may wrap past midnight (`22:00-06:00`): the
 * hours `--pause-outside` lets a run write in. Pure: every function takes the time it judges.
 */

/** A parsed window; minutes since local midnight, the end excluded. */
export interface DailyWindow {
  /** As the user wrote it, normalised (`22:00-06:00`). */
  readonly text: string;
  readonly startMin: number;
  readonly endMin: number;
}

const WINDOW = /^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$/;
const pad = (n: number) => String(n).padStart(2, "0");
const hhmm = (min: number) => `${pad(Math.floor(min / 60))}:${pad(min % 60)}`;

/**
 * Parses `HH:MM-HH:MM` (24-hour local time). Returns the window, or a sentence saying what is wrong
 * with it (to follow the flag's name).
 *
 * @example
 *   parseDailyWindow("22:00-06:00") // { text: "22:00-06:00", startMin: 1320, endMin: 360 }
 *   parseDailyWindow("25:00-06:00") // "must be HH:MM-HH:MM ..."
 */
export function parseDailyWindow(text: string): DailyWindow | string {
  const m = WINDOW.exec(text);
  const shape = `must be HH:MM-HH:MM in 24-hour local time (e.g. 22:00-06:00, which wraps past midnight), got "${text}"`;
  if (!m) return shape;
  const [h1, m1, h2, m2] = [m[1], m[2], m[3], m[4]].map(Number) as [number, number, number, number];
  if (h1 > 23 || h2 > 23 || m1 > 59 || m2 > 59) return shape;
  const startMin = h1 * 60 + m1;
  const endMin = h2 * 60 + m2;
  if (startMin === endMin) {
    return `is an empty window (it starts where it ends), got "${text}"; leave --pause-outside out to write at any time`;
  }
  return { text: `${hhmm(startMin)}-${hhmm(endMin)}`, startMin, endMin };
}

/**
 * Whether `at` (local time) is inside the window: from its start, included, to its end, excluded.
 *
 * @example
 *   insideWindow(w22to06, new Date(2026, 0, 1, 23, 30)) // true
 */
export function insideWindow(w: DailyWindow, at: Date): boolean {
  const m = at.getHours() * 60 + at.getMinutes();
  return w.startMin < w.endMin ? m >= w.startMin && m < w.endMin : m >= w.startMin || m < w.endMin;
}

/**
 * The next time after `at` at which the window opens (when `at` is outside) or closes (inside).
 *
 * @example
 *   nextWindowChange(w22to06, new Date(2026, 0, 1, 12, 0)) // 2026-01-01 22:00 local
 */
export function nextWindowChange(w: DailyWindow, at: Date): Date {
  const target = insideWindow(w, at) ? w.endMin : w.startMin;
  const next = new Date(at);
  next.setHours(Math.floor(target / 60), target % 60, 0, 0);
  if (next.getTime() <= at.getTime()) next.setDate(next.getDate() + 1);
  return next;
}
