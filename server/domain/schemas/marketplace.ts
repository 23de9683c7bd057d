/**
 * The marketplace's public projection of a listed task ({ meta, state }), the on-chain task record, and the bodies
 * of the indexing routes. Later routes (accept, deliver, A2A tasks/list) reuse the projection schemas.
 *
 * No key material (wrappedKeys, custody keys) appears in any schema of this file's responses.
 */
import { z, address, bytes32, chainName, issue, pageLimit, pageOffset, taskHash, txHash } from "./common";
import { CHAIN_NAMES } from "../../escrow/records";
import { postingTermsShape, verificationCriteriaSchema } from "./postingTerms";
import { postingChainField } from "./posting";

// ---------------------------------------------------------------------------------------------------------------
// Projection
// ---------------------------------------------------------------------------------------------------------------

export const MARKETPLACE_STATUSES = [
  "open",
  "assigning",
  "assigned",
  "submitted",
  "verifying",
  "verified",
  "completed",
  "cancelled",
  "disputed",
  "expired",
] as const;
export type MarketplaceStatus = (typeof MARKETPLACE_STATUSES)[number];

export const PRIVACIES = ["private", "public"] as const;
export const LISTING_MODES = ["manual", "auto", "agent"] as const;

/** The settlement chain of a task, in every view of it. */
const taskChainSchema = z
  .enum(CHAIN_NAMES)
  .openapi({ description: "The settlement chain whose escrow holds the task (on-chain ids are unique per chain)" });
const taskChainIdSchema = z.number().int().nullable().openapi({
  description: "That chain's EVM chain id; null only when the service is configured for the chain without a deployment",
});

export const taskMetaSchema = z
  .object({
    taskHash: z.string().openapi({ description: "SHA-256 of the brief blob; the task's id in the API" }),
    onChainTaskId: z.number().int().openapi({ description: "Task id in the escrow on `chain`" }),
    chain: taskChainSchema,
    chainId: taskChainIdSchema,
    token: z.string().nullable().openapi({ description: "Settlement token address" }),
    amount: z.string().nullable().openapi({ description: "Reward in the token's smallest unit" }),
    deadline: z.number().int().nullable().openapi({ description: "Creation-time deadline, Unix seconds" }),
    effectiveDeadline: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Deadline plus time the escrow spent paused; null until the task is indexed" }),
    verificationMode: z.enum(LISTING_MODES),
    verificationCriteria: verificationCriteriaSchema.nullable(),
    verifierAddress: z.string().nullable().openapi({ description: "The task's on-chain verifier agent, if any" }),
    requiredCapabilities: z.array(z.string()),
    privacy: z.enum(PRIVACIES),
    rootHash: z.string().nullable(),
    publicBrief: z.string().optional().openapi({ description: "Display copy of the brief; public tasks only" }),
    targetExecutor: z.string().nullable(),
    serviceId: z.number().int().nullable(),
    posterAvatar: z.string().optional().openapi({ description: "Present when the poster made one" }),
    listedAt: z.number().int().openapi({ description: "When the task was indexed, Unix seconds (chain time)" }),
    fundingTxHash: z
      .string()
      .openapi({ description: "The transaction that funded the task (the one it was listed from)" }),
  })
  .openapi("TaskMeta");
export type TaskMeta = z.infer<typeof taskMetaSchema>;

export const taskStateSchema = z
  .object({
    status: z.enum(MARKETPLACE_STATUSES),
    onChainStatus: z.number().int().openapi({
      description: "Escrow status: 0 Funded, 1 Assigned, 2 Submitted, 3 Verified, 4 Completed, 5 Cancelled, 6 Disputed",
    }),
  })
  .openapi("TaskState");
export type TaskState = z.infer<typeof taskStateSchema>;

export const marketplaceTaskSchema = z
  .object({ meta: taskMetaSchema, state: taskStateSchema })
  .openapi("MarketplaceTask");

/** Every field of the escrow's getTask plus its per-task state and settlement, from the on-chain projection. */
export const onChainTaskSchema = z
  .object({
    chain: taskChainSchema,
    chainId: taskChainIdSchema,
    taskId: z.number().int().openapi({ description: "Task id in the escrow on `chain`" }),
    poster: z.string(),
    worker: z.string(),
    token: z.string(),
    amount: z.string(),
    taskHash: z.string(),
    evidenceHash: z.string(),
    status: z.number().int(),
    category: z.string(),
    locationZone: z.string(),
    createdAt: z.number().int(),
    deadline: z.number().int(),
    effectiveDeadline: z.number().int(),
    submissionAttempts: z.number().int(),
    disputedAt: z.number().int(),
    verifier: z.string().openapi({ description: "Verifier agent, or the zero address (marketplace verifier)" }),
    failedVerdictAt: z.number().int(),
    escalated: z.boolean(),
    payout: z.string().nullable().openapi({ description: "Worker payout once paid" }),
    fee: z.string().nullable().openapi({ description: "Platform fee once paid" }),
    refund: z.string().nullable().openapi({ description: "Refund to the poster once refunded" }),
    fundingTxHash: z.string().openapi({ description: "The transaction whose TaskCreated created the task" }),
    open: z
      .object({
        submissionCount: z.number().int().openapi({ description: "Commitments made (revealed or not)" }),
        pick: z
          .string()
          .nullable()
          .openapi({
            description:
              "The poster's pick among several revealed submissions, pending until the contest window passes " +
              "uncontested; null while none",
          }),
        pickedAt: z.number().int().nullable(),
        outcome: z
          .enum(["picked", "judged", "default"])
          .nullable()
          .openapi({
            description:
              "How the winner was decided: picked by the poster, judged (a refund when worker is the zero address), " +
              "default (the poster let the selection window pass); null while undecided",
          }),
      })
      .optional()
      .openapi({ description: "Open-submission tasks only: their selection state" }),
  })
  .openapi("OnChainTask");
export type OnChainTask = z.infer<typeof onChainTaskSchema>;

export const taskDetailSchema = onChainTaskSchema
  .extend({
    a2aMeta: taskMetaSchema.nullable(),
    a2aState: taskStateSchema.nullable(),
    resultData: z.unknown().optional().openapi({
      description:
        "The deliverable (null until one exists). Present only for the poster, the worker, or anyone on a public task",
    }),
  })
  .openapi("TaskDetail");

export const openTasksSchema = z.object({ tasks: z.array(marketplaceTaskSchema), total: z.number().int() });

export const postedTasksSchema = z.object({
  tasks: z.array(
    z.object({
      meta: taskMetaSchema,
      state: taskStateSchema,
      onChain: onChainTaskSchema.nullable(),
      resultData: z.unknown().optional().openapi({
        description: "The latest deliverable whose submitEvidence is mined (null until one exists)",
      }),
    }),
  ),
  total: z.number().int(),
});

// ---------------------------------------------------------------------------------------------------------------
// Queries and path parameters
// ---------------------------------------------------------------------------------------------------------------

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A positive integer (on-chain id) or a 0x 32-byte task hash, else INVALID_TASK_ID. */
export const taskIdParam = z
  .string()
  .superRefine((v, ctx) => {
    const numeric = /^[1-9][0-9]{0,20}$/.test(v) && BigInt(v) <= MAX_SAFE;
    const hash = /^0x[0-9a-fA-F]{64}$/.test(v) && !/^0x0{64}$/.test(v);
    if (!numeric && !hash) issue(ctx, "INVALID_TASK_ID", "id must be a positive integer or a 0x 32-byte task hash");
  })
  .transform((v): { taskId: number } | { taskHash: string } =>
    v.startsWith("0x") ? { taskHash: v.toLowerCase() } : { taskId: Number(v) },
  )
  .openapi({
    type: "string",
    example: "1",
    description: "The task: its on-chain id (a positive integer) or its 0x task hash",
  });

/** Capability tags: trimmed, lower-case, no commas (the open-task filter is comma-separated), unique. */
export const capabilitiesSchema = z
  .array(
    z
      .string()
      .transform((c) => c.trim().toLowerCase())
      .pipe(
        z
          .string()
          .min(1, "must not be blank")
          .max(64)
          .regex(/^[^,\u0000-\u001f]+$/, "must not contain a comma or a control character"),
      )
      .openapi({
        description: "A capability tag (trimmed, lower-cased; 1 to 64 characters, no comma)",
        example: "summarise",
      }),
  )
  .max(20)
  .transform((caps) => [...new Set(caps)].sort());

/** A list's chain filter: only that chain's tasks; absent, every chain's. */
const listChainFilter = chainName.optional().openapi({
  type: "string",
  enum: [...CHAIN_NAMES],
  description: "Only tasks settling on this chain (default: every configured chain)",
});

export const openTasksQuery = z.object({
  capabilities: z
    .string()
    .optional()
    .transform((v) =>
      v === undefined
        ? undefined
        : [
            ...new Set(
              v
                .split(",")
                .map((c) => c.trim().toLowerCase())
                .filter((c) => c !== ""),
            ),
          ],
    )
    .openapi({
      type: "string",
      description:
        "Comma-separated capabilities of the caller: a task is returned when all its required capabilities are in the list (present but empty: only tasks that require none)",
    }),
  minReputation: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0).openapi({
    type: "integer",
    description: "Minimum reputation of the poster as a poster (decayed score; see docs/marketplace.md)",
  }),
  chain: listChainFilter,
  limit: pageLimit,
  offset: pageOffset,
});

export const postedTasksQuery = z.object({
  chain: listChainFilter,
  limit: pageLimit,
  offset: pageOffset,
});

/** GET /tasks/{id}: the chain a numeric id is read on. */
export const taskReadQuery = z.object({
  chain: chainName.optional().openapi({
    type: "string",
    enum: [...CHAIN_NAMES],
    description:
      "The chain a numeric id is read on (default: the posting chain); a task hash finds the task on either chain " +
      "and ignores it",
  }),
});

// ---------------------------------------------------------------------------------------------------------------
// Indexing bodies
// ---------------------------------------------------------------------------------------------------------------

export const PUBLIC_BRIEF_MAX = 4000;

/** The terms of one task to list (the index body without txHash; an index-batch entry). */
export const indexItemSchema = z
  .object({
    taskHash: taskHash.openapi({ description: "The funded task's hash, as built (0x SHA-256 of the brief)" }),
    ...postingTermsShape,
    requiredCapabilities: capabilitiesSchema
      .optional()
      .openapi({ description: "Capabilities an agent needs to take the task", example: ["summarise"] }),
    targetExecutor: address.optional().openapi({ description: "Pin the task to one agent (rent flow)" }),
    serviceId: z
      .number()
      .int()
      .positive()
      .max(2_147_483_647)
      .optional()
      .openapi({ description: "Requires targetExecutor" }),
    privacy: z.enum(PRIVACIES).optional().openapi({ description: "Default private; cannot change after indexing" }),
    publicBrief: z
      .string()
      .superRefine((v, ctx) => {
        if ([...v].length > PUBLIC_BRIEF_MAX) {
          issue(ctx, "VALIDATION_ERROR", `publicBrief must be at most ${PUBLIC_BRIEF_MAX} characters`);
        }
        if (v.includes("\u0000")) issue(ctx, "VALIDATION_ERROR", "publicBrief must not contain NUL characters");
      })
      .optional()
      .openapi({ description: `Display copy of a public brief, at most ${PUBLIC_BRIEF_MAX} characters` }),
    custodyWrappedKey: z
      .string()
      .regex(/^(0x)?[0-9a-fA-F]+$/, "must be a hex ECIES blob")
      .max(2000)
      .optional()
      .openapi({ description: "The brief key wrapped to the platform's custody key; private tasks only" }),
  })
  .openapi("IndexTask");
export type IndexItem = z.output<typeof indexItemSchema>;

export const indexBodySchema = indexItemSchema
  .extend({
    txHash,
    chain: postingChainField.openapi({
      description:
        "The chain the funding transaction was sent on (base or arc; the posting chain when absent): its receipt is " +
        "read there and the listing belongs to it",
    }),
  })
  .openapi("IndexTaskBody");
export type IndexBody = z.output<typeof indexBodySchema>;

export const INDEX_BATCH_MAX = 50;

export const indexBatchBodySchema = z
  .object({
    txHash: bytes32.openapi({ description: "Funding transaction, or the user-operation hash when isUserOp" }),
    isUserOp: z.boolean().optional(),
    chain: postingChainField.openapi({
      description:
        "The chain the funding transaction was sent on (base or arc; the posting chain when absent): its receipt is " +
        "read there and the listings belong to it",
    }),
    tasks: z
      .array(indexItemSchema)
      .min(1)
      .superRefine((tasks, ctx) => {
        if (tasks.length > INDEX_BATCH_MAX) {
          issue(ctx, "BATCH_TOO_LARGE", `tasks holds at most ${INDEX_BATCH_MAX} entries, got ${tasks.length}`);
        }
        const seen = new Map<string, number>();
        tasks.forEach((t, i) => {
          const first = seen.get(t.taskHash);
          if (first !== undefined) {
            ctx.addIssue({
              code: z.ZodIssueCode.custom,
              path: [i, "taskHash"],
              message: `duplicates tasks[${first}].taskHash`,
            });
          } else seen.set(t.taskHash, i);
        });
      }),
  })
  .openapi("IndexBatchBody");
export type IndexBatchBody = z.output<typeof indexBatchBodySchema>;

export const indexResultSchema = z
  .object({ taskHash: z.string(), onChainTaskId: z.number().int(), indexed: z.literal(true) })
  .openapi("IndexResult");
export type IndexResult = z.infer<typeof indexResultSchema>;

export const indexItemErrorSchema = z.object({
  taskHash: z.string(),
  error: z.object({ code: z.string(), message: z.string() }),
});

export const indexBatchResultSchema = z.object({
  results: z.array(z.union([indexResultSchema, indexItemErrorSchema])),
});
export type IndexBatchResult = z.infer<typeof indexBatchResultSchema>;

const TASK_ID_DEPRECATED_MESSAGE =
  "marketplace operations take the task hash (0x + 64 hex), not a numeric id: numeric ids collide across chains";

/** The task hash of a marketplace path: lower-case; a numeric id is TASK_ID_DEPRECATED, the zero hash EMPTY_HASH. */
export const taskHashParam = z
  .string()
  .superRefine((v, ctx) => {
    if (/^[0-9]+$/.test(v)) issue(ctx, "TASK_ID_DEPRECATED", TASK_ID_DEPRECATED_MESSAGE);
    else if (!/^0x[0-9a-fA-F]{64}$/.test(v)) issue(ctx, "VALIDATION_ERROR", "must be 0x followed by 64 hex characters");
    else if (/^0x0{64}$/.test(v)) issue(ctx, "EMPTY_HASH", "the task hash must not be zero");
  })
  .transform((v) => v.toLowerCase())
  .openapi({
    type: "string",
    example: `0x${"ab".repeat(32)}`,
    description: "The task hash (a numeric id answers TASK_ID_DEPRECATED)",
  });

/** The `:hash` path parameter of the marketplace routes. */
export const taskHashParams = z.object({ hash: taskHashParam });
