/**
 * Reading a response body the tool did not write, within a cap: a platform page is a few hundred
 * KiB (1000 identities), so a body larger than the cap is not an answer to read but a fault, and it
 * is refused before it fills the memory.
 */

/** The most a response body of the platform API may hold: 16 MiB, some 30 times its largest page. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** The most a token response may hold: a token, its type, lifetime and scopes. */
export const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/** A body read whole, or how much had come when the cap was passed. */
export type BoundedBody =
  | { readonly text: string }
  | { readonly tooLarge: { readonly bytes: number; readonly declared: number | undefined } };

/**
 * Reads `body` as UTF-8 text, stopping (and destroying the stream) as soon as more than `cap`
 * bytes have come or the declared Content-Length already says so.
 *
 * @example
 *   const b = await readBounded(res.body, res.headers["content-length"], MAX_RESPONSE_BYTES);
 *   if ("tooLarge" in b) refuse(b.tooLarge.bytes);
 */
export async function readBounded(
  body: AsyncIterable<Buffer> & { destroy?: () => unknown },
  contentLength: string | string[] | undefined | null,
  cap: number,
): Promise<BoundedBody> {
  const raw = Array.isArray(contentLength) ? contentLength[0] : contentLength;
  const declared = raw != null && /^\d+$/.test(raw) ? Number(raw) : undefined;
  if (declared !== undefined && declared > cap) {
    body.destroy?.();
    return { tooLarge: { bytes: 0, declared } };
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > cap) {
      body.destroy?.();
      return { tooLarge: { bytes, declared } };
    }
    chunks.push(chunk);
  }
  const text =
    chunks.length === 1 ? (chunks[0] as Buffer).toString() : Buffer.concat(chunks).toString();
  return { text };
}

/**
 * The sentence that refuses an oversized body: the cap, and how much came (or was announced).
 *
 * @example
 *   tooLargeDetail({ bytes: 16777300, declared: undefined }, MAX_RESPONSE_BYTES)
 *   // "the response body is larger than the cap of 16 MiB per response (over 16777300 bytes came) …"
 */
export function tooLargeDetail(
  size: { readonly bytes: number; readonly declared: number | undefined },
  cap: number,
): string {
  const came =
    size.declared !== undefined
      ? `Content-Length ${size.declared} bytes`
      : `more than ${size.bytes} bytes came before it was cut off`;
  return `the response body is larger than the cap of ${mib(cap)} per response (${came}); no platform answer is that large, so it is refused unread. Check --api-url and --token-url`;
}

const mib = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`;
