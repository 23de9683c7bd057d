/**
 * The listing terms shared by task building (POST /tasks, /tasks/batch) and indexing (POST /a2a/tasks/index):
 * verification mode and criteria, capabilities, storage root, wrapped keys and verifier. One schema, two routes.
 */
import { z, issue } from "./common";
import { analyseRegex, hasRealRule, VERIFICATION_MODES } from "../verification";

export const verificationCriteriaSchema = z
  .object({
    min_length: z
      .number()
      .int()
      .min(0)
      .max(10_000_000)
      .optional()
      .openapi({ description: "Fewest characters the result must have", example: 200 }),
    contains_keywords: z
      .array(z.string().max(200).openapi({ description: "A keyword (at most 200 characters)", example: "summary" }))
      .max(50)
      .optional()
      .openapi({ description: "Keywords the result must contain, each of them (at most 50)" }),
    required_fields: z
      .array(z.string().max(200).openapi({ description: "A top-level field name", example: "summary" }))
      .max(50)
      .optional()
      .openapi({ description: "Fields a JSON result must have at its top level (at most 50)" }),
    regex_pattern: z
      .string()
      .max(2000)
      .optional()
      .openapi({ description: "A regular expression the result must match (linear-time patterns only)" }),
    regex_flags: z
      .string()
      .max(4)
      .optional()
      .openapi({ description: "Flags of regex_pattern, as JavaScript spells them", example: "i" }),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.regex_pattern !== undefined) {
      const verdict = analyseRegex(c.regex_pattern, c.regex_flags ?? "");
      if (!verdict.usable) issue(ctx, "REGEX_PATTERN_UNUSABLE", `regex_pattern ${verdict.reason}`);
    }
  })
  .openapi("VerificationCriteria");

/** 64 hex characters (with or without 0x) or a blob id of the storage (`blob_` and 64 hex). */
export const rootHashSchema = z
  .string()
  .superRefine((v, ctx) => {
    if (!/^(0x)?[0-9a-fA-F]{64}$/.test(v) && !/^blob_[0-9a-f]{64}$/.test(v)) {
      issue(ctx, "INVALID_HASH", "rootHash must be 64 hex characters or a valid blob id");
    }
  })
  .transform((v) => (v.startsWith("blob_") ? v : `0x${v.replace(/^0x/, "").toLowerCase()}`));

export const wrappedKeysSchema = z
  .record(
    z.string(),
    z
      .string()
      .regex(/^(0x)?[0-9a-fA-F]+$/, "must be a hex ECIES blob")
      .max(2000)
      .openapi({ description: "The brief key wrapped (ECIES) to this address's public key, hex" }),
  )
  .superRefine((keys, ctx) => {
    for (const k of Object.keys(keys)) {
      if (!/^0x[0-9a-fA-F]{40}$/.test(k)) issue(ctx, "BAD_ADDRESS", `wrappedKeys key ${k} is not 0x plus 40 hex`);
    }
    if (Object.keys(keys).length > 200) issue(ctx, "VALIDATION_ERROR", "wrappedKeys holds at most 200 entries");
  })
  .transform((keys) => Object.fromEntries(Object.entries(keys).map(([k, v]) => [k.toLowerCase(), v])));

export const verifierAddressSchema = z.string().superRefine((v, ctx) => {
  if (!/^0x[0-9a-fA-F]{40}$/.test(v)) issue(ctx, "INVALID_VERIFIER", "verifierAddress must be a 20-byte address");
});

export const postingTermsShape = {
  verificationMode: z
    .enum(VERIFICATION_MODES)
    .optional()
    .openapi({
      description:
        "Who judges the delivery: manual (the poster), auto (the service, by verificationCriteria) or agent " +
        "(verifierAddress's agent)",
    }),
  verificationCriteria: verificationCriteriaSchema.optional().openapi({
    description: "For auto: what the result must hold",
    example: { required_fields: ["summary"] },
  }),
  requiredCapabilities: z
    .array(z.string().min(1).max(64).openapi({ description: "A capability tag", example: "summarise" }))
    .max(20)
    .optional()
    .openapi({ description: "Capabilities an agent needs to take the task (at most 20)", example: ["summarise"] }),
  rootHash: rootHashSchema.optional().openapi({
    description: "The uploaded blob's root hash when it differs from taskHash (upload_brief's rootHash)",
  }),
  wrappedKeys: wrappedKeysSchema.optional().openapi({
    description: "Private briefs: the brief key wrapped to each reader, by 0x address (docs/api.md Private briefs)",
  }),
  verifierAddress: verifierAddressSchema
    .transform((v) => v.toLowerCase())
    .optional()
    .openapi({ description: "Mode agent: the verifier agent's 0x address (not the poster)" }),
};

export interface PostingTerms {
  verificationMode?: (typeof VERIFICATION_MODES)[number];
  verificationCriteria?: z.output<typeof verificationCriteriaSchema>;
  requiredCapabilities?: string[];
  rootHash?: string;
  wrappedKeys?: Record<string, string>;
  verifierAddress?: string;
}

/**
 * Rules across fields, the same for build and index. `poster` is the key's wallet. Returns the error to answer, or
 * undefined. Used per item by the batch routes.
 */
export function checkPostingTerms(
  terms: PostingTerms,
  poster: string,
  privacy: "private" | "public" = "private",
): { code: Parameters<typeof issue>[1]; message: string; status?: number } | undefined {
  const mode = terms.verificationMode ?? "manual";
  if (mode === "oracle") {
    return { code: "VERIFICATION_MODE_UNSUPPORTED", message: "verificationMode oracle is not supported" };
  }
  if (mode === "auto" && !hasRealRule(terms.verificationCriteria)) {
    return {
      code: "AUTO_CRITERIA_REQUIRED",
      message:
        "verificationMode auto needs at least one rule in verificationCriteria (min_length, contains_keywords, required_fields or regex_pattern)",
    };
  }
  if (mode === "agent" && !terms.verifierAddress) {
    return { code: "NO_VERIFIER", message: "verificationMode agent needs verifierAddress" };
  }
  if (terms.verifierAddress && terms.verifierAddress === poster) {
    return { code: "INVALID_VERIFIER", message: "verifierAddress must not be the poster" };
  }
  if (
    privacy === "private" &&
    terms.verifierAddress &&
    terms.wrappedKeys &&
    !terms.wrappedKeys[terms.verifierAddress]
  ) {
    return {
      code: "VERIFIER_NOT_WRAPPED",
      message: `the brief key must be wrapped to the verifier ${terms.verifierAddress} (wrappedKeys)`,
    };
  }
  return undefined;
}
