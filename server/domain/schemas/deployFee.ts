/** The agent deploy fee (spec "Agent deploy-fee factory"): the terms read, and verifying a paid fee. */
import { txHash, z } from "./common";
import { unsignedTxSchema } from "./posting";

export const deployFeeSchema = z
  .object({
    required: z.boolean().openapi({ description: "Whether hosting an agent costs the deploy fee on this server" }),
    factory: z.string().optional().openapi({ description: "The AgentFactory proxy" }),
    token: z.string().optional(),
    amount_raw: z.string().optional().openapi({ description: "The fee, in the token's smallest units" }),
    treasury: z.string().optional(),
    how: z.string().optional(),
    transactions: z
      .object({ approve: unsignedTxSchema, deployAgent: unsignedTxSchema })
      .optional()
      .openapi({ description: "With an API key: approve exactly the fee, then deployAgent(0), from the key's wallet" }),
    credits: z
      .number()
      .int()
      .optional()
      .openapi({ description: "With an API key: the wallet's unspent deploy credits" }),
  })
  .openapi("DeployFee");
export type DeployFee = z.infer<typeof deployFeeSchema>;

export const deployFeeVerifyBodySchema = z.object({ txHash }).strict().openapi("DeployFeeVerifyBody");

export const deployFeeVerifiedSchema = z
  .object({
    txHash: z.string(),
    payer: z.string(),
    amount_raw: z.string(),
    credits: z.number().int().openapi({ description: "The wallet's unspent deploy credits, this one included" }),
  })
  .openapi("DeployFeeVerified");
export type DeployFeeVerified = z.infer<typeof deployFeeVerifiedSchema>;
