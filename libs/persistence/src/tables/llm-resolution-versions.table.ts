/**
 * The version of an account's model resolution inputs (profiles, bindings, Project LLM overrides),
 * bumped in every write's transaction (docs/decisions.md "Model profiles: resolution cache").
 */
export interface LlmResolutionVersionsTable {
  account_id: string;
  version: number;
}
