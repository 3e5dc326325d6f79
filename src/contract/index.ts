/**
 * The platform's facts, the only door to `contract/`: what the CLI's client and the sandbox
 * package (through `packages/sandbox/src/shared.ts`) both know of the platform, written once, and
 * the synthetic identities both seed from. Ships with the CLI; imports nothing of the tool.
 */
export * from "./identity-controls.ts";
export * from "./limits.ts";
export * from "./paths.ts";
export * from "./published-schema.ts";
export * from "./scopes.ts";
export * from "./synthetic.ts";
