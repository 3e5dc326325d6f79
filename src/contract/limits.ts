/**
 * Limits the tool and the sandbox share, written once: the source reader classifies a longer id
 * as an anomaly, and the sandbox refuses to seed one, so `sandbox --from-db` serves every id the
 * tool accepts.
 */

/** The longest identity id, in characters. */
export const MAX_IDENTITY_ID_LENGTH = 256;
