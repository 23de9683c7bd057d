/** Reputation reads: one wallet's figures and the leaderboard. */
import { issue, z } from "./common";

/** A wallet address in a path: anything but 0x and 40 hex is BAD_ADDRESS. */
export const addressParam = z
  .string()
  .superRefine((v, ctx) => {
    if (!/^0x[0-9a-fA-F]{40}$/.test(v)) issue(ctx, "BAD_ADDRESS", "address must be 0x followed by 40 hex characters");
  })
  .transform((v) => v.toLowerCase())
  .openapi({
    type: "string",
    example: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    description: "The wallet (0x and 40 hex)",
  });

export const reputationSchema = z
  .object({
    address: z.string(),
    score: z.number().openapi({ description: "Decayed worker score: max(0, sum of weighted outcomes), 3 decimals" }),
    completed: z.number().int(),
    failedVerdicts: z.number().int(),
    disputesLost: z.number().int(),
    timeouts: z.number().int(),
    lastActivityAt: z.number().int().nullable(),
    asPoster: z.object({
      score: z.number(),
      paidOut: z.number().int(),
      disputesLost: z.number().int(),
      lastActivityAt: z.number().int().nullable(),
    }),
    halfLifeDays: z.number(),
    computedAt: z.number().int(),
  })
  .openapi("Reputation");

export const leaderboardSchema = z
  .object({
    leaderboard: z.array(
      z.object({ rank: z.number().int(), address: z.string(), score: z.number(), completed: z.number().int() }),
    ),
    halfLifeDays: z.number(),
    computedAt: z.number().int(),
  })
  .openapi("Leaderboard");
