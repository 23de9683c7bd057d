/** Schemas of the task build routes: one task's terms, the single and batch bodies, the unsigned transaction. */
import { z, address, amount, chainName, duration, issue, taskHash } from "./common";
import { postingTermsShape } from "./postingTerms";

/* ------------------------------------------------------------------------------------------------------------ */
/*                                                   Schemas                                                    */
/* ------------------------------------------------------------------------------------------------------------ */

/** The `chain` field of the build and index bodies. */
export const postingChainField = chainName.optional().openapi({
  type: "string",
  enum: ["base", "arc"],
  description:
    "The settlement chain to post on (base or arc; the settlement record's postingChain when absent). Unknown: 400 " +
    "INVALID_CHAIN; one this service does not serve or has no escrow on: 503 CHAIN_NOT_CONFIGURED",
});

/** Most tasks one batch build takes, whatever the escrow's own maximum. */
export const MAX_BATCH_TASKS = 50;
/** Longest locationZone: free text, but each 32 bytes of it costs the poster a storage slot per task. */
export const MAX_LOCATION_ZONE = 100;

const taskTermsShape = {
  taskHash: taskHash.openapi({ description: "0x SHA-256 of the brief blob as uploaded; never zero" }),
  amount,
  locationZone: z
    .string()
    .min(1, "must not be empty")
    .max(MAX_LOCATION_ZONE, `must be at most ${MAX_LOCATION_ZONE} characters`)
    .openapi({
      example: "global",
      description:
        "Where the work is to be done, as free text stored on-chain with the task (1 to 100 characters): global for " +
        "work that can be done anywhere, else a region such as eu-west",
    }),
  duration: duration.openapi({ description: "Whole seconds from 3600 to 7776000" }),
  targetExecutorType: z
    .enum(["human", "agent"])
    .optional()
    .openapi({ description: "Who may take the task: a human or an agent (anyone when absent)" }),
  ...postingTermsShape,
};

/**
 * Unknown fields are refused (a misspelt `verifierAddress` must not silently build a createTask). Checked by a
 * refinement over a passthrough object rather than `.strict()`, so that the OpenAPI document can describe the single
 * body as TaskBuildTerms plus `token` (an allOf) without `additionalProperties: false` making it unsatisfiable.
 */
function refuseUnknownFields(known: readonly string[]) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
    for (const key of Object.keys(value)) {
      if (!known.includes(key))
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: [key], message: "is not a field of this body" });
    }
  };
}

const taskTermsObject = z.object(taskTermsShape).passthrough().openapi("TaskBuildTerms", {
  description: "One task: the single build body without token. Unknown fields are refused.",
});

/** One task's terms: the single build body without `token`, and one entry of a batch. */
export const taskBuildTermsSchema = taskTermsObject.superRefine(refuseUnknownFields(Object.keys(taskTermsShape)));

export type TaskBuildTerms = z.output<typeof taskBuildTermsSchema>;

const taskBuildBodyObject = taskTermsObject
  .extend({
    token: address.optional().openapi({
      description:
        "The settlement token of the chain posted on (GET /api/v1/health/settlement, its entry of chains); that " +
        "token when omitted",
    }),
    chain: postingChainField,
  })
  .openapi("TaskBuildBody", { description: "One task to build. Unknown fields are refused." });

/** The single build body. */
export const taskBuildBodySchema = taskBuildBodyObject.superRefine(
  refuseUnknownFields(Object.keys(taskBuildBodyObject.shape)),
);

export type TaskBuildBody = z.output<typeof taskBuildBodySchema>;

/**
 * A batch. The entries of `tasks` are checked one by one by `taskBuildTermsSchema` after the envelope, so that every
 * refused task is reported with its index (INVALID_TASKS) instead of the first one failing the whole body.
 */
export const taskBatchBuildBodySchema = z
  .object({
    token: address.openapi({ description: "The settlement token of the chain posted on, once for the batch" }),
    chain: postingChainField,
    tasks: z
      .array(
        // Documented as TaskBuildTerms; validated per entry by buildTaskBatch.
        z.unknown().openapi({ $ref: "#/components/schemas/TaskBuildTerms" } as never),
      )
      .openapi({ description: `1 to ${MAX_BATCH_TASKS} tasks, each with build_task's fields but token` })
      .min(1, `must hold 1 to ${MAX_BATCH_TASKS} tasks`)
      .superRefine((tasks, ctx) => {
        if (tasks.length > MAX_BATCH_TASKS) {
          issue(ctx, "BATCH_TOO_LARGE", `must hold at most ${MAX_BATCH_TASKS} tasks, got ${tasks.length}`);
        }
      })
      .openapi({ maxItems: MAX_BATCH_TASKS }),
  })
  .strict()
  .openapi("TaskBatchBuildBody");

export type TaskBatchBuildBody = z.output<typeof taskBatchBuildBodySchema>;

export const unsignedTxSchema = z
  .object({
    to: z.string().openapi({ description: "The escrow proxy of the chain posted on (chain, chainId)" }),
    data: z.string().openapi({ description: "Calldata" }),
    from: z.string().openapi({ description: "The wallet the API key acts as; it must sign" }),
    value: z.literal("0"),
    gas: z
      .string()
      .optional()
      .openapi({ description: "Gas limit (batch builds): estimate plus one fifth, or a size-based fallback" }),
  })
  .openapi("UnsignedTx");

export type UnsignedTx = z.infer<typeof unsignedTxSchema>;

/** The approval a build needs first: the same shape, to the settlement token. */
export const approveTxSchema = z
  .object({
    to: z.string().openapi({ description: "The settlement token of the chain posted on" }),
    data: z
      .string()
      .openapi({ description: "Calldata of approve(escrow proxy, exactly the reward or the batch's sum)" }),
    from: z.string().openapi({ description: "The wallet the API key acts as; it must sign" }),
    value: z.literal("0"),
  })
  .openapi("ApproveTx");

export const taskBuildSchema = z
  .object({
    unsignedTx: unsignedTxSchema,
    approveTx: approveTxSchema.nullable().openapi({
      description:
        "Sign and send first: approve(escrow, exactly the reward) on the settlement token; null when the wallet's " +
        "allowance to the escrow already covers the reward",
    }),
    chain: z.enum(["base", "arc"]).openapi({ description: "The chain the transactions are for" }),
    chainId: z.number().int().openapi({ description: "That chain's id: send both transactions there" }),
  })
  .openapi("TaskBuild");

export const taskBatchBuildSchema = taskBuildSchema
  .extend({ taskHashes: z.array(z.string()) })
  .openapi("TaskBatchBuild");

export type TaskBuild = z.infer<typeof taskBuildSchema>;
export type TaskBatchBuild = z.infer<typeof taskBatchBuildSchema>;
