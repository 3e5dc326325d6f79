/**
 * The configuration's public face; it lives in `config/` (the options table, the loaders, the URL
 * policy, and what is generated from the table). Kept as a file so that `../config.ts` imports
 * across the tree stay valid.
 */
export * from "./config/index.ts";
export { preloadSecretFile } from "./config/secret-file.ts";
