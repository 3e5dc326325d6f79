/**
 * The `pg` module, loaded without its Cloudflare probe: `navigator-shim.ts` runs first (ES modules
 * run in the order of their first import) and its navigator is removed once pg is loaded. Every
 * module of the tool that needs pg's values imports it from here.
 */
import "./navigator-shim.ts";
import pg from "pg";
import { definedNavigator } from "./navigator-shim.ts";

if (definedNavigator) Reflect.deleteProperty(globalThis, "navigator");

export default pg;
