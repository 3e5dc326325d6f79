/** The OAuth scopes of the published schema's operations, written once. */
export const SCOPES = Object.freeze({
  readIdentity: "identity:read_identity",
  readControl: "identity:read_identity_control",
  writeControl: "identity:write_identity_control",
  readQuoteExecution: "exchange:read_quote_execution",
  readOrder: "exchange:read_order",
  writeInternalTransfer: "transfer:write_internal_transfer",
  readDepositAddress: "transfer:read_deposit_address",
  writeOrchestrationRule: "orchestration:write_orchestration_rule",
} as const);
