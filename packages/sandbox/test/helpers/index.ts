/**
 * The sandbox's test helpers, for its own tests and the CLI's (`controls-sandbox/test-helpers`):
 * HTTP calls against a started sandbox, and `controls-sandbox` as a child process.
 */

export { admin, adminOk } from "./sandbox-api.ts";
export * from "./sandbox-http.ts";
export * from "./sandbox-process.ts";
