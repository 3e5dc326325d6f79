/**
 * Imported just before `pg` (`pg-module.ts`), which asks at load time whether it runs in a
 * Cloudflare Worker. Where node has no `navigator` (node 20), pg answers by building a fetch
 * `Response`, which loads node's bundled undici: about 25 ms of every PostgreSQL command's start,
 * a tenth of `status`. With a navigator whose user agent is node's, as node 21 and later define
 * it, pg answers at once. `pg-module.ts` removes it again once pg is loaded.
 */
export const definedNavigator = !("navigator" in globalThis);
if (definedNavigator) {
  Object.defineProperty(globalThis, "navigator", {
    value: { userAgent: `Node.js/${process.versions.node.split(".")[0]}` },
    configurable: true,
  });
}
