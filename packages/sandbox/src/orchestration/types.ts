/** Public types of the orchestration domain: rules and their endpoints. */

export interface RuleEndpoint {
  crypto?: { address_id?: string; address?: string; network: string };
  fiat?: {
    deposit_instructions_id?: string;
    network?: string;
    account_type?: string;
    memo_id?: string;
    fiat_account_id?: string;
    memo?: string;
  };
  profile?: { profile_id: string };
}

export interface OrchestrationRule {
  id: string;
  ref_id: string;
  nickname: string;
  profile_id: string;
  identity_id?: string;
  account_id?: string;
  /** ACTIVE until deleted; the published enum also has PENDING and REJECTED. */
  status: "ACTIVE" | "DELETED";
  source_asset: string;
  destination_asset: string;
  source: RuleEndpoint;
  destination: RuleEndpoint;
  created_at: string;
}

export interface OrchestrationRuleSeed {
  ref_id: string;
  profile_id: string;
  source_asset: string;
  destination_asset: string;
  source: RuleEndpoint;
  destination: RuleEndpoint;
  id?: string;
  nickname?: string;
  identity_id?: string;
  account_id?: string;
  created_at?: string;
}

/** The orchestration seeding API; each method has an admin route twin under /__sandbox. */
export interface OrchestrationApi {
  seedOrchestrationRules(items: readonly OrchestrationRuleSeed[]): OrchestrationRule[];
  orchestrationRules(): OrchestrationRule[];
}
