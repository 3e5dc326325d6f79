/**
 * The names of the migrations this version knows, for `status`'s one-statement check that a
 * database's schema is the one the code expects (commands reach migrations only through db/).
 */
import { migrations } from "../../migrations/index.ts";

export const MIGRATION_NAMES: readonly string[] = Object.freeze(Object.keys(migrations));
