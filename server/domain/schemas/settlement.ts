/** Schema of GET /api/v1/health/settlement. */
import { z } from "./common";

const chainEntry = z.object({
  chain: z.enum(["base", "arc"]),
  chainId: z.number().int().nullable(),
  tier: z.string(),
  escrowAddress: z.string().nullable(),
  token: z
    .object({ kind: z.literal("erc20"), address: z.string(), symbol: z.string(), decimals: z.number().int() })
    .nullable(),
  relayChain: z.string().nullable(),
  gasSymbol: z.string(),
  postable: z.boolean(),
  batchCreate: z.object({ supported: z.boolean(), maxBatch: z.number().int() }),
});

export const settlementSchema = z
  .object({ postingChain: z.enum(["base", "arc"]), chains: z.array(chainEntry), settlementTier: z.string() })
  .openapi("Settlement");

export type Settlement = z.infer<typeof settlementSchema>;
