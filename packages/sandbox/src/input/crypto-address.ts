import { createHash } from "node:crypto";

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** A well-shaped (not checksummed) address for the network, derived from the record id. */
export function addressFor(network: string, id: string): string {
  const digest = createHash("sha256").update(`${network}:${id}`).digest();
  const hex = digest.toString("hex") + createHash("sha256").update(id).digest("hex");
  const pick = (alphabet: string, n: number) =>
    Array.from({ length: n }, (_, i) => alphabet[(digest[i % 32]! + i * 7) % alphabet.length]).join(
      "",
    );
  switch (network) {
    case "BITCOIN":
      return `bc1q${hex.slice(0, 38)}`;
    case "LITECOIN":
      return `ltc1q${hex.slice(0, 38)}`;
    case "BITCOIN_CASH":
      return `bitcoincash:q${hex.slice(0, 41)}`;
    case "SOLANA":
      return pick(BASE58, 44);
    case "STELLAR":
      return `G${pick(BASE32, 55)}`;
    default:
      return `0x${hex.slice(0, 40)}`;
  }
}
