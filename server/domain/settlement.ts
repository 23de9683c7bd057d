/**
 * The settlement record: which chain posts, its escrow and token, and whether it takes batches. The local devnet
 * stands in for the configured posting chain (POSTING_CHAIN, default base).
 */
import { z } from "./schemas/common";
import { isTokenAllowed } from "../db/repositories/allowedTokens";
import type { Deps } from "./deps";

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

export async function readSettlement(deps: Deps): Promise<Settlement> {
  const { api } = deps.config;
  const chain = deps.chain;
  if (!chain) {
    return {
      postingChain: api.postingChain,
      chains: [
        {
          chain: api.postingChain,
          chainId: null,
          tier: api.settlementTier,
          escrowAddress: null,
          token: null,
          relayChain: null,
          gasSymbol: api.gasSymbol,
          postable: false,
          batchCreate: { supported: false, maxBatch: 0 },
        },
      ],
      settlementTier: api.settlementTier,
    };
  }
  const { book } = chain;
  const maxBatch = await chain.maxBatch();
  const postable = await isTokenAllowed(deps.db, book.token.address);
  return {
    postingChain: api.postingChain,
    chains: [
      {
        chain: api.postingChain,
        chainId: book.chainId,
        tier: api.settlementTier,
        escrowAddress: book.escrow.proxy,
        token: { kind: "erc20", address: book.token.address, symbol: book.token.symbol, decimals: book.token.decimals },
        relayChain: null,
        gasSymbol: api.gasSymbol,
        postable,
        batchCreate: { supported: maxBatch !== null, maxBatch: maxBatch ?? 0 },
      },
    ],
    settlementTier: api.settlementTier,
  };
}
