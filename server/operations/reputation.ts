/** Reputation: one wallet's decayed figures and the leaderboard. Rules in server/domain/reputation.ts. */
import { defineOperation, type AnyOperation } from "./operation";
import { z } from "../domain/schemas/common";
import { addressParam, leaderboardSchema, reputationSchema } from "../domain/schemas/reputation";
import { readLeaderboard, readReputation } from "../domain/reputation";

// Declared before /reputation/:address, which would otherwise take "leaderboard" as an address.
export const leaderboardRoute = defineOperation({
  mcp: { tool: "get_leaderboard" },
  method: "get",
  path: "/api/v1/reputation/leaderboard",
  summary: "Top 50 workers by decayed reputation",
  description:
    "Workers with a score above 0, by score, then completed tasks, then address; rank counts from 1 in that order.",
  tags: ["public", "reputation"],
  auth: "none",
  response: leaderboardSchema,
  handler: ({ deps }) => readLeaderboard(deps),
});

export const reputationRoute = defineOperation({
  mcp: { tool: "get_reputation" },
  method: "get",
  path: "/api/v1/reputation/:address",
  summary: "A wallet's reputation, merged from its on-chain outcomes and decayed with a 90-day half-life",
  description:
    "Worker outcomes: completed +1, failed verdict -0.5, dispute lost -1, timeout -1, each x 0.5^(age / 90 days) with age measured to the chain's clock; score = max(0, sum) to 3 decimals. asPoster: paid-out tasks +1, disputes ruled for the worker -1. A wallet without outcomes answers zeros, not 404.",
  tags: ["public", "reputation"],
  auth: "none",
  request: { params: z.object({ address: addressParam }) },
  response: reputationSchema,
  errors: ["BAD_ADDRESS"],
  handler: ({ params, deps }) => readReputation(deps, params.address),
});

export const reputationRoutes: AnyOperation[] = [leaderboardRoute, reputationRoute];
