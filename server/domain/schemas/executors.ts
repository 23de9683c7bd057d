/** Executor (agent) registration and the public executors listing. */
import { MAX_UINT256, chainName, issue, pageOffset, z } from "./common";
import { CHAIN_NAMES as CHAINS } from "../../escrow/records";
import { isValidAgentPublicKey } from "../briefs";

export type { ChainName } from "../../escrow/records";
export const MAX_EXECUTOR_CAPABILITIES = 50;

/** Uncompressed secp256k1 key as hex (04, x, y), checked to be a point on the curve. */
const publicKey = z
  .string({ invalid_type_error: "must be a string" })
  .regex(/^04[0-9a-fA-F]{128}$/, "must be 130 hex characters (an uncompressed secp256k1 key: 04, x, y), no 0x")
  .refine(isValidAgentPublicKey, "is not a point on the secp256k1 curve")
  .transform((v) => v.toLowerCase())
  .openapi({ example: `04${"a1".repeat(64)}`, description: "Uncompressed secp256k1 public key, 130 hex, no 0x" });

/** A capability tag: trimmed, lower-case, 1..64 characters, no comma (the filters are comma-separated). */
export const capability = z
  .string()
  .transform((c) => c.trim().toLowerCase())
  .pipe(
    z
      .string()
      .min(1, "must not be blank")
      .max(64, "must be at most 64 characters")
      .regex(/^[^,\u0000-\u001f\u007f]+$/, "must not contain a comma or a control character"),
  )
  .openapi({
    description: "A capability tag (trimmed, lower-cased; 1 to 64 characters, no comma)",
    example: "summarise",
  });

/** A whole number of the token's smallest unit, 0 allowed, normalised ("007" -> "7"). */
export const minReward = z
  .string({ invalid_type_error: "must be a string of digits" })
  .superRefine((v, ctx) => {
    if (!/^[0-9]{1,78}$/.test(v)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: "must be a whole number (decimal digits) in the token's smallest unit",
      });
    } else if (BigInt(v) > MAX_UINT256) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "must be at most 2^256 - 1" });
    }
  })
  .transform((v) => BigInt(v).toString())
  .openapi({ example: "1000000", description: "Smallest unit of the settlement token (USDC: 6 decimals)" });

export const displayName = z
  .string()
  .transform((v) => v.trim())
  .pipe(
    z
      .string()
      .min(1, "must not be blank")
      .max(64, "must be at most 64 characters")
      .regex(/^[^\u0000-\u001f\u007f]+$/, "must not contain control characters"),
  );

/** An agent's offer to verify: whether it opts in, and the name verifier lists show. */
export const verifierOptInShape = {
  optIn: z.boolean().openapi({ description: "true to be listed as a verifier agent" }),
  name: displayName.optional().openapi({ description: "The name verifier lists show (required when optIn is true)" }),
};

export const executorBodySchema = z
  .object({
    // null and "" count as missing (NO_PUBKEY), like an absent field.
    publicKey: z
      .preprocess((v) => (v === null || v === "" ? undefined : v), publicKey.optional())
      .openapi({
        type: "string",
        example: `04${"a1".repeat(64)}`,
        description: "Uncompressed secp256k1 public key, 130 hex, no 0x; required (NO_PUBKEY when missing)",
      }),
    capabilities: z
      .array(capability)
      .max(MAX_EXECUTOR_CAPABILITIES, `at most ${MAX_EXECUTOR_CAPABILITIES} capabilities`)
      .default([])
      .transform((caps) => [...new Set(caps)].sort())
      .openapi({ description: "What the agent can do: capability tags tasks ask for", example: ["summarise", "text"] }),
    supportedChains: z
      .array(chainName)
      .min(1, "at least one chain")
      .max(10)
      .optional()
      .transform((chains) => (chains ? [...new Set(chains)].sort() : undefined))
      .openapi({ description: "Chains the agent settles on (default: the posting chain)" }),
    minReward: minReward.default("0"),
    verifier: z
      .object(verifierOptInShape)
      .strict()
      .superRefine((v, ctx) => {
        if (v.optIn && v.name === undefined) {
          ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["name"], message: "is required when optIn is true" });
        }
      })
      .default({ optIn: false })
      .openapi({ description: "Offer to verify other agents' work: { optIn: true, name } (default: not a verifier)" }),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.publicKey === undefined)
      issue(ctx, "NO_PUBKEY", "publicKey is required: agents receive brief keys wrapped to it");
  })
  .openapi("ExecutorRegistration");

export type ExecutorBody = z.output<typeof executorBodySchema>;

export const ownExecutorSchema = z
  .object({
    address: z.string(),
    publicKey: z.string(),
    capabilities: z.array(z.string()),
    supportedChains: z.array(z.enum(CHAINS)),
    minReward: z.string(),
    verifier: z.object({ optIn: z.boolean(), name: z.string().nullable() }),
    reputation: z.number(),
    registeredAt: z.number().int(),
    updatedAt: z.number().int(),
    lastSeenAt: z.number().int(),
    running: z
      .boolean()
      .openapi({ description: "Seen (registration, heartbeat, marketplace operation) within 10 minutes" }),
  })
  .openapi("OwnExecutor");

export const registrationResultSchema = ownExecutorSchema.extend({ created: z.boolean() });

export const heartbeatSchema = z.object({
  address: z.string(),
  lastSeenAt: z.number().int(),
  running: z.literal(true),
});

export const publicExecutorSchema = z
  .object({
    address: z.string(),
    publicKey: z.string(),
    capabilities: z.array(z.string()),
    reputation: z.number(),
    supportedChains: z.array(z.enum(CHAINS)),
    name: z.string().optional().openapi({ description: "Only with role=verifier" }),
  })
  .openapi("Executor");

export const executorsListSchema = z.object({ executors: z.array(publicExecutorSchema), total: z.number().int() });

export const executorsQuery = z
  .object({
    capabilities: z
      .string()
      .optional()
      .transform((v) =>
        v === undefined
          ? []
          : [
              ...new Set(
                v
                  .split(",")
                  .map((c) => c.trim().toLowerCase())
                  .filter((c) => c !== ""),
              ),
            ],
      )
      .pipe(z.array(z.string().max(64, "each capability is at most 64 characters")).max(MAX_EXECUTOR_CAPABILITIES))
      .openapi({
        type: "string",
        description: "Comma-separated: executors declaring ALL of them (blank entries ignored)",
      }),
    chain: chainName.optional().openapi({ description: "Executors settling there" }),
    role: z
      .enum(["verifier"])
      .optional()
      .openapi({ description: "verifier: opted-in verifiers seen within 10 minutes; adds name" }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(200)
      .default(100)
      .openapi({ type: "integer", description: "Page size: at most 200 items (default 100)" }),
    offset: pageOffset,
  })
  .openapi("ExecutorsQuery");

export type ExecutorsQuery = z.output<typeof executorsQuery>;
