/** Pull payments: what a wallet is owed and the unsigned withdraw. Rules in server/domain/credits.ts. */
import { defineOperation, type AnyOperation } from "./operation";
import { z } from "../domain/schemas/common";
import { addressParam } from "../domain/schemas/reputation";
import { creditsQuerySchema, creditsSchema, withdrawAnswerSchema, withdrawBodySchema } from "../domain/schemas/credits";
import { buildWithdraw, readCredits } from "../domain/credits";

export const creditsRoute = defineOperation({
  mcp: { tool: "get_credits" },
  method: "get",
  path: "/api/v1/credits/:address",
  summary: "What a wallet is owed by the escrow, per token (pull payments)",
  description:
    "Open-task winners, bond returns, forfeited bonds and the halves of a dispute nobody ruled on are credited, not " +
    "sent: each token's owed amount is taken with POST /api/v1/credits/withdraw. Figures from the indexed Credited " +
    "and Withdrawn events. Each settlement chain's escrow owes its own credits: every balance names its `chain`; " +
    "`?chain=` shows one chain's, the default every chain's. A wallet never credited answers an empty list.",
  tags: ["public", "marketplace"],
  auth: "none",
  request: { params: z.object({ address: addressParam }), query: creditsQuerySchema },
  response: creditsSchema,
  errors: ["BAD_ADDRESS", "INVALID_CHAIN", "CHAIN_NOT_CONFIGURED"],
  handler: ({ params, query, deps }) => readCredits(deps, params.address, query),
});

export const withdrawRoute = defineOperation({
  mcp: { tool: "withdraw_credit" },
  method: "post",
  path: "/api/v1/credits/withdraw",
  summary: "Take what your wallet is owed in a token: answers the unsigned withdraw",
  description:
    "withdraw(token, to) sends the caller's whole credit in `token` to `to` (your wallet by default), on the " +
    "escrow of `chain` (default: the posting chain): the transaction names its chain and chainId. Not refused " +
    "while the escrow is paused. INVALID_STATE when nothing is owed in that token on that chain as indexed.",
  tags: ["marketplace"],
  auth: "required",
  request: { body: withdrawBodySchema },
  response: withdrawAnswerSchema,
  errors: ["VALIDATION_ERROR", "INVALID_CHAIN", "INVALID_STATE", "CHAIN_NOT_CONFIGURED"],
  handler: ({ body, caller, deps }) => buildWithdraw(deps, caller!.wallet, body),
});

export const creditRoutes: AnyOperation[] = [creditsRoute, withdrawRoute];
