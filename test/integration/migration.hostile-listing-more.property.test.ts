/**
 * Issue 26 §1: exit 0 only when the books balance, against a hostile listing: 100 more random cases
 * on each backend, from a seed of their own (`../helpers/hostile-listing-property.ts`; the first
 * 100 are `migration.hostile-listing.property.test.ts`'s).
 */
import { hostileListingProperty } from "../helpers/hostile-listing-property.ts";

hostileListingProperty({ seed: 260027, runs: 100 });
