/** Agents and the deploy fee: what hosting an agent costs, and turning a paid fee into a deploy credit. */
import { defineRoute, type AnyRoute } from "../route";
import { deployFeeSchema, deployFeeVerifiedSchema, deployFeeVerifyBodySchema } from "../../domain/schemas/deployFee";
import { readDeployFee, verifyDeployFee } from "../../domain/deployFee";

export const deployFeeRoute = defineRoute({
  method: "get",
  path: "/api/v1/agents/deploy-fee",
  summary: "The agent deploy fee: required or not, and when required the factory, token, amount and how to pay",
  description:
    "With an API key the answer also carries the unsigned approve (exactly the fee) and deployAgent(0) for the " +
    "key's wallet, and its unspent deploy credits.",
  tags: ["agents"],
  auth: "optional",
  response: deployFeeSchema,
  errors: ["DEPLOY_FEE_UNAVAILABLE"],
  handler: ({ caller, deps }) => readDeployFee(deps, caller?.wallet),
});

export const verifyDeployFeeRoute = defineRoute({
  method: "post",
  path: "/api/v1/agents/deploy-fee/verify",
  summary: "Turn a paid deploy fee into one deploy credit of the key's wallet (once per payment)",
  tags: ["agents"],
  auth: "required",
  request: { body: deployFeeVerifyBodySchema },
  response: deployFeeVerifiedSchema,
  errors: [
    "DEPLOY_FEE_NOT_PAID",
    "DEPLOY_FEE_REVERTED",
    "DEPLOY_FEE_NOT_FOUND",
    "DEPLOY_FEE_IN_USE",
    "DEPLOY_FEE_UNAVAILABLE",
    "DEPLOY_FEE_CHECK_FAILED",
  ],
  handler: ({ body, caller, deps }) => verifyDeployFee(deps, caller!.wallet, body.txHash),
});

export const agentRoutes: AnyRoute[] = [deployFeeRoute, verifyDeployFeeRoute];
