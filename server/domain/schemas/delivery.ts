/**
 * Bodies and answers of the delivery routes: submit, verify, finalize, decline, release, reclaim, dispute.
 */
import { z, address, bytes32 } from "./common";
import { unsignedTxSchema } from "./posting";
import { MAX_REASON_LENGTH } from "../marketplace/evaluate";

const reason = z
  .string()
  .max(MAX_REASON_LENGTH)
  .optional()
  .openapi({ description: `Why (at most ${MAX_REASON_LENGTH} characters); stored with the verdict` });

export const submitBodySchema = z
  .object({
    result: z.unknown().openapi({
      description:
        "The deliverable: any JSON value but null. Stored as its canonical JSON (RFC 8785), at most 512 KiB in UTF-8",
    }),
    evidenceHash: bytes32.optional().openapi({
      description: "Optional: keccak256 of the result's canonical JSON (UTF-8); it must match the service's own",
    }),
  })
  .strict()
  .openapi("SubmitBody");

export const verifyBodySchema = z
  .object({
    passed: z.boolean().openapi({ description: "true: the work passes (paid); false: a failed verdict" }),
    reason,
  })
  .strict()
  .openapi("VerifyBody");

export const declineBodySchema = z.object({ reason }).strict().openapi("DeclineBody");

const txAnswerShape = {
  taskHash: z.string(),
  onChainTaskId: z.number().int(),
  unsignedTx: unsignedTxSchema,
  chain: z.enum(["base", "arc"]),
  chainId: z.number().int(),
};

export const txAnswerSchema = z.object(txAnswerShape).openapi("DeliveryTx");

export const submitAnswerSchema = z
  .object({
    ...txAnswerShape,
    attempt: z.number().int().openapi({ description: "This submission's attempt (1 to 3) once mined" }),
    evidenceHash: z
      .string()
      .openapi({ description: "keccak256 of the result's canonical JSON: submitEvidence's argument" }),
  })
  .openapi("SubmitResult");

export const verifyAnswerSchema = z
  .object({
    ...txAnswerShape,
    attempt: z.number().int(),
    passed: z.boolean(),
  })
  .openapi("VerifyResult");

export const verdictAnswerSchema = z
  .object({
    taskHash: z.string(),
    onChainTaskId: z.number().int(),
    attempt: z.number().int(),
    passed: z.boolean(),
    intent: z
      .object({
        key: z.string().openapi({ description: "verdict:<taskId>:<attempt>" }),
        status: z.string().openapi({ description: "pending, sent or confirmed" }),
        txHash: z.string().nullable(),
      })
      .openapi({ description: "The marketplace verifier's completeVerification" }),
    state: z.string().openapi({ description: "The marketplace state: verifying until the transaction is mined" }),
  })
  .openapi("VerdictResult");

export const reclaimAnswerSchema = z
  .object({
    ...txAnswerShape,
    outcome: z.enum(["refund", "escalate", "split"]).openapi({
      description:
        "refund: the reward returns to you; escalate: submitted, unjudged work becomes disputed (no refund); split: " +
        "a dispute nobody ruled on is split, half credited to each side (the worker's half less the fee), taken " +
        "with POST /api/v1/credits/withdraw",
    }),
  })
  .openapi("ReclaimResult");

export const judgeOpenBodySchema = z
  .object({
    winner: address.openapi({
      description: "The revealed submitter to pay, or the zero address to refund the poster",
    }),
  })
  .strict()
  .openapi("JudgeOpenBody");
