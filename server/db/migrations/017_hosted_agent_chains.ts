import type { ChainName } from "../../escrow/records";
import type { Migration } from "./migration";

/**
 * hosted_agents.chains: the settlement chains the owner enables for the agent (a JSON array of chain names, sorted).
 * An agent created before this migration ran on the posting chain alone (its worker registered the posting chain as
 * its supportedChains), so it keeps exactly that: `postingChain`, which the entry points pass to `migrateLatest`
 * (POSTING_CHAIN; `base` when none is passed). Agents created afterwards default to every configured chain.
 */
export function hostedAgentChains(postingChain: ChainName): Migration {
  return {
    name: "017_hosted_agent_chains",
    async up(db) {
      // The default fills the rows already stored (every insert names the agent's chains).
      await db.schema.alterTable("hosted_agents", (t) => {
        t.text("chains")
          .notNullable()
          .defaultTo(JSON.stringify([postingChain]));
      });
    },
    async down(db) {
      await db.schema.alterTable("hosted_agents", (t) => {
        t.dropColumn("chains");
      });
    },
  };
}
