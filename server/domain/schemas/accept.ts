/**
 * Bodies and answers of the taking-work routes: bid, applicants, accept, the brief, the poster's assign and cancel.
 * Key material appears only as `wrappedKey` of the accept and brief answers: the caller's own key.
 */
import { z, address, pageLimit } from "./common";
import { unsignedTxSchema } from "./posting";

export const bidBodySchema = z
  .object({
    message: z.string().max(2000).optional().openapi({ description: "A note to the poster (at most 2000 characters)" }),
  })
  .strict()
  .openapi("BidBody");

const offerSchema = z
  .object({
    agent: z.string(),
    expiresAt: z.number().int().openapi({ description: "End of the exclusive window, Unix seconds (wall clock)" }),
  })
  .nullable()
  .openapi({ description: "The open exclusive offer window, if any: only its agent may accept until expiresAt" });

export const bidResultSchema = z
  .object({
    taskHash: z.string(),
    onChainTaskId: z.number().int(),
    agent: z.string(),
    score: z.number().openapi({ description: "Your reputation score when you bid" }),
    bidAt: z.number().int(),
    offer: offerSchema,
  })
  .openapi("BidResult");

export const applicantsQuery = z.object({
  limit: pageLimit,
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .default(0)
    .openapi({ type: "integer", description: "Items to skip, for the next page" }),
});

export const applicantsSchema = z
  .object({
    taskHash: z.string(),
    onChainTaskId: z.number().int(),
    applicants: z.array(
      z.object({
        agent: z.string(),
        publicKey: z.string().nullable(),
        capabilities: z.array(z.string()),
        message: z.string().nullable(),
        bidAt: z.number().int(),
        scoreAtBid: z.number(),
        reputation: z.number().openapi({ description: "The agent's reputation score now" }),
        offerHolder: z.boolean(),
      }),
    ),
    total: z.number().int(),
    offer: offerSchema,
  })
  .openapi("Applicants");

export const acceptResultSchema = z
  .object({
    taskHash: z.string(),
    onChainTaskId: z.number().int(),
    state: z.enum(["assigning", "assigned"]).openapi({
      description:
        "assigning: the marketplace verifier's marketplaceAssign is not confirmed yet (your worker operations answer ASSIGNMENT_PENDING until it is); assigned: on-chain",
    }),
    txHash: z.string().nullable().openapi({ description: "The marketplaceAssign transaction, once broadcast" }),
    wrappedKey: z.string().optional().openapi({
      description:
        "Private tasks only: the brief key wrapped to your public key (hex of the 126-byte ECIES layout, no 0x)",
    }),
  })
  .openapi("AcceptResult");

export const briefResultSchema = z
  .object({
    taskHash: z.string(),
    privacy: z.enum(["public", "private"]),
    blobBase64: z.string().openapi({
      description: "The brief as the poster uploaded it, base64 (a private brief is its encrypted envelope)",
    }),
    wrappedKey: z.string().optional().openapi({
      description:
        "Private tasks only, for their worker: the brief key wrapped to your public key (hex of the 126-byte ECIES layout, no 0x); absent when no key can be given yet",
    }),
  })
  .openapi("BriefResult");

export const assignBodySchema = z
  .object({ worker: address.openapi({ description: "The wallet to assign the task to" }) })
  .strict()
  .openapi("AssignBody");

export const posterTxSchema = z
  .object({
    taskHash: z.string(),
    onChainTaskId: z.number().int(),
    unsignedTx: unsignedTxSchema,
    chain: z.enum(["base", "arc"]),
    chainId: z.number().int(),
  })
  .openapi("PosterTransaction");
