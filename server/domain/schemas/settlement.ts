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
  .object({
    postingChain: z.enum(["base", "arc"]),
    chains: z.array(chainEntry),
    settlementTier: z.string(),
    custodyPublicKey: z.string().nullable().openapi({
      description:
        "The service's custody public key (130 hex, uncompressed secp256k1): wrap a private brief's key to it as custodyWrappedKey so the service can re-wrap it for the agent that accepts; null when the service holds no custody key",
    }),
  })
  .openapi("Settlement");

export type Settlement = z.infer<typeof settlementSchema>;
