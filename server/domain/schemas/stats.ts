/** Schema of GET /api/v1/stats. */
import { z } from "./common";
import { CHAIN_NAMES } from "../../escrow/records";

/** The task figures of one settlement chain. */
export const chainStatsSchema = z
  .object({
    openTasks: z.number().int(),
    completedTasks: z.number().int(),
  })
  .openapi("ChainStats");

export const statsSchema = z
  .object({
    openTasks: z.number().int().openapi({ description: "Every configured chain's open tasks" }),
    totalAgents: z.number().int(),
    activeAgents: z.number().int(),
    registeredUsers: z.number().int(),
    completedTasks: z.number().int().openapi({ description: "Every configured chain's paid tasks" }),
    byChain: z.record(z.enum(CHAIN_NAMES), chainStatsSchema).openapi({
      description:
        "The task figures of each configured chain (the top-level ones are their sums); agents and users are " +
        "wallets, counted once however many chains they settle on",
    }),
  })
  .openapi("Stats");

export type Stats = z.infer<typeof statsSchema>;
