/**
 * Hosted agents (docs/api.md, "Hosted agents"): the owner's requests (create, act, install skills, export the key) and
 * the views answered. One schema each gives validation, types and the OpenAPI document.
 */
import { chainName, txHash, z } from "./common";
import { CHAIN_NAMES } from "../../escrow/records";
import { signedMessageFields } from "./accounts";
import { capability, displayName, minReward, MAX_EXECUTOR_CAPABILITIES, verifierOptInShape } from "./executors";

/** Paths under /api/v1/agents that are routes, so never a slug (GET /agents/skills is the catalog). */
export const RESERVED_SLUGS = ["deploy-fee", "skills", "action"] as const;

const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

export const slug = z
  .string()
  .min(3, "must be 3 to 40 characters")
  .max(40, "must be 3 to 40 characters")
  .regex(SLUG_PATTERN, "must be lower-case letters, digits and dashes (not starting or ending with a dash)")
  .refine((v) => !(RESERVED_SLUGS as readonly string[]).includes(v), {
    message: `is reserved (${RESERVED_SLUGS.join(", ")} are paths of the API)`,
  })
  .openapi({ example: "my-summarizer", description: "Unique among live agents; 3 to 40 of a-z, 0-9 and -" });

/** A skill id as the catalog names them. */
const skillId = z
  .string()
  .min(1, "must not be blank")
  .max(40, "must be at most 40 characters")
  .regex(/^[a-z0-9-]+$/, "must be lower-case letters, digits and dashes")
  .openapi({ example: "webhook" });

const secretsObject = z
  .record(
    z
      .string()
      .min(1, "must not be blank")
      .max(4096, "must be at most 4096 characters")
      .openapi({ description: "The secret's value (at most 4096 characters)" }),
  )
  .refine((v) => Object.keys(v).length <= 20, "at most 20 secrets")
  .openapi({ description: "Secrets the skill needs (stored encrypted, never answered)" });

const configObject = z.record(z.unknown()).openapi({
  description:
    "The skill's configuration: the fields its catalog entry names (list_skills), each an integer, a string, a list of strings or a string map as the entry says",
});

export const skillInstallBodySchema = z
  .object({
    skill: skillId.openapi({ description: "The skill's id (list_skills)" }),
    config: configObject.optional(),
    secrets: secretsObject.optional(),
  })
  .strict()
  .openapi("HostedAgentSkillInstall", { description: "A skill to install: its id, configuration and secrets" });
export type SkillInstallBody = z.output<typeof skillInstallBodySchema>;

/** The owner's extra capabilities: trimmed, lower-cased, deduplicated and sorted. */
const extraCapabilities = z
  .array(capability)
  .max(MAX_EXECUTOR_CAPABILITIES, `at most ${MAX_EXECUTOR_CAPABILITIES}`)
  .transform((caps) => [...new Set(caps)].sort())
  .openapi({ description: "Capabilities beyond those its skills give" });

/**
 * The chains the agent settles on, deduplicated and sorted: each a known chain name (INVALID_CHAIN otherwise); the
 * domain checks that this service settles there (CHAIN_NOT_SERVED).
 */
const agentChains = z
  .array(chainName)
  .min(1, "at least one chain")
  .max(CHAIN_NAMES.length, `at most ${CHAIN_NAMES.length} chains`)
  .transform((chains) => [...new Set(chains)].sort())
  .openapi({
    description:
      "Settlement chains the agent takes tasks on, among the service's (GET /health/settlement chains); its executor record's supportedChains",
    example: ["base"],
  });

export const createAgentBodySchema = z
  .object({
    slug,
    name: displayName.openapi({ description: "The agent's display name" }),
    description: z
      .string()
      .max(2000, "must be at most 2000 characters")
      .optional()
      .openapi({ description: "What the agent does (at most 2000 characters)" }),
    capabilities: extraCapabilities.default([]),
    chains: agentChains.optional().openapi({
      description: "Settlement chains the agent takes tasks on (default: every chain the service settles on)",
    }),
    minReward: minReward.default("0"),
    skills: z
      .array(skillInstallBodySchema)
      .max(20, "at most 20 skills")
      .default([])
      .openapi({
        description: "Skills to install: { skill, config?, secrets? } each",
        example: [{ skill: "summary" }],
      }),
    verifier: z
      .object(verifierOptInShape)
      .strict()
      .superRefine((v, ctx) => {
        if (v.optIn && v.name === undefined) {
          ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["name"], message: "is required when optIn is true" });
        }
      })
      .default({ optIn: false })
      .openapi({ description: "Serve as a verifier agent (listed by GET /a2a/executors?role=verifier while running)" }),
    deployFeeTxHash: txHash
      .optional()
      .openapi({ description: "A paid deploy fee not yet verified: verified inline, then its credit is spent" }),
  })
  .strict()
  .openapi("HostedAgentCreate");
export type CreateAgentBody = z.output<typeof createAgentBodySchema>;

/** PATCH /agents/:agent: the settings given replace the agent's; at least one. */
export const agentSettingsBodySchema = z
  .object({
    capabilities: extraCapabilities.optional().openapi({
      description: "Capabilities beyond those its skills give (replaces the extra ones; [] removes them)",
    }),
    chains: agentChains.optional(),
  })
  .strict()
  .refine((v) => v.capabilities !== undefined || v.chains !== undefined, {
    message: "name at least one setting to change: capabilities or chains",
  })
  .openapi("HostedAgentSettings");
export type AgentSettingsBody = z.output<typeof agentSettingsBodySchema>;

export const AGENT_ACTIONS = ["start", "stop", "pause", "resume", "restart"] as const;
export type AgentAction = (typeof AGENT_ACTIONS)[number];

/** agentId is checked by the domain (AGENT_ID_REQUIRED when missing), so the schema lets it through as optional. */
export const agentActionBodySchema = z
  .object({
    agentId: z.string().max(64).optional().openapi({ description: "The agent's id (agt_...) or slug" }),
    action: z.enum(AGENT_ACTIONS).openapi({ description: "What to do with the agent" }),
  })
  .strict()
  .openapi("HostedAgentAction");

export const agentParams = z.object({
  agent: z.string().min(1).max(64).openapi({ description: "The agent's id (agt_ and 24 hex) or slug" }),
});

export const agentSkillParams = agentParams.extend({
  skill: skillId.openapi({ description: "The skill's id (list_skills)" }),
});

export const logsQuery = z
  .object({
    after: z.coerce.number().int().min(0).optional().openapi({ description: "Lines after this id" }),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  })
  .strict();

const logLineSchema = z
  .object({
    id: z.number().int(),
    level: z.string(),
    message: z.string(),
    at: z.string().openapi({ description: "ISO 8601, UTC" }),
  })
  .openapi("HostedAgentLogLine");
export type LogLine = z.infer<typeof logLineSchema>;

export const logsSchema = z.object({ logs: z.array(logLineSchema) }).openapi("HostedAgentLogs");

export const agentViewSchema = z
  .object({
    id: z.string(),
    slug: z.string().nullable(),
    name: z.string(),
    description: z.string().nullable(),
    owner: z.string(),
    wallet: z.string().openapi({ description: "The agent's own address (it is paid there)" }),
    status: z.enum(["stopped", "starting", "running", "paused", "crashed", "deleted"]),
    desiredState: z.enum(["stopped", "running", "paused"]),
    minReward: z.string(),
    capabilities: z.array(z.string()).openapi({ description: "Its skills' capabilities and the extra ones" }),
    extraCapabilities: z.array(z.string()),
    chains: z
      .array(z.enum(CHAIN_NAMES))
      .openapi({ description: "Settlement chains it takes tasks on (its executor record's supportedChains)" }),
    skills: z.array(z.object({ skill: z.string(), config: z.record(z.unknown()), installedAt: z.string() })),
    verifier: z.object({ optIn: z.boolean(), name: z.string().nullable() }),
    restarts: z.number().int(),
    generation: z.number().int(),
    lastError: z.string().nullable(),
    earnings: z.object({
      amount_raw: z.string().openapi({ description: "Payouts the escrow paid its wallet, net of fee" }),
      paidTasks: z.number().int(),
    }),
    recentLogs: z.array(logLineSchema).openapi({ description: "The last 20 lines, oldest first" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("HostedAgent");
export type AgentView = z.input<typeof agentViewSchema>;

export const agentListSchema = z.object({ agents: z.array(agentViewSchema) }).openapi("HostedAgentList");

export const skillCatalogSchema = z
  .object({
    skills: z.array(
      z.object({
        id: z.string(),
        title: z.string(),
        description: z.string(),
        capabilities: z.array(z.string()),
        configDependentCapabilities: z
          .boolean()
          .openapi({ description: "True when the install's config names the capabilities (webhook)" }),
        requiredSecrets: z.array(z.string()),
        config: z.array(
          z.object({
            name: z.string(),
            type: z.enum(["integer", "string", "string[]", "record<string,string>"]),
            required: z.boolean(),
            description: z.string(),
            default: z.unknown().optional(),
          }),
        ),
      }),
    ),
  })
  .openapi("HostedAgentSkillCatalog");

export const deletedAgentSchema = z.object({ id: z.string(), deleted: z.literal(true) });

export const uninstalledSchema = z.object({ id: z.string(), skill: z.string(), uninstalled: z.literal(true) });

export const exportChallengeSchema = z
  .object({
    message: z.string().openapi({ description: "EIP-4361 message to sign with the owner's wallet (personal_sign)" }),
    nonce: z.string(),
    expiresAt: z.string(),
  })
  .openapi("HostedAgentExportChallenge");

export const exportBodySchema = z.object(signedMessageFields).strict().openapi("HostedAgentExport");

export const exportedKeySchema = z
  .object({ address: z.string(), privateKey: z.string().openapi({ description: "0x and 64 hex: keep it secret" }) })
  .openapi("HostedAgentKey");
