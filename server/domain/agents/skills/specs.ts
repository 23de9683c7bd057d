/**
 * The built-in skills as their owner meets them: what each does, the capabilities it gives, the secrets it needs and
 * the config it accepts, parsed here so that the API lists and validates an install without the code that runs it.
 * Each skill's runtime (its `run`) is beside the agent host that runs it, in server/hosting/skills/.
 *
 * The text skills work on the brief's text: with config `field`, the string at that dotted path of a JSON brief;
 * without, the `text` string of a brief that is a JSON object with one, else the brief as is.
 */
import net from "node:net";
import { fail } from "../../../errors";
import { isPublicAddress } from "../../events/webhooks";
import { capability } from "../../schemas/executors";
import { z } from "../../schemas/common";
import { dottedPath, parseSkillConfig } from "./config";
import type { SkillConfigField, SkillConfigOptions, SkillDefinition } from "./types";

// ---------------------------------------------------------------------------------------------------------------
// summary
// ---------------------------------------------------------------------------------------------------------------

const field = dottedPath.optional();
const FIELD_DOC: SkillConfigField = {
  name: "field",
  type: "string",
  required: false,
  description: "Dotted path of the text inside a JSON brief (default: the brief's `text`, else the whole brief)",
};

export const summaryConfig = z
  .object({
    maxSentences: z.number().int().min(1).max(10).default(3),
    field,
  })
  .strict();

export const summarySkill: SkillDefinition = {
  id: "summary",
  title: "Extractive summary",
  description:
    "Keeps the brief's most representative sentences (scored by the frequency of their words, stop words left out), " +
    "in their original order. Answers { summary, sentences, wordCount }.",
  capabilities: ["summarise", "text"],
  requiredSecrets: [],
  configFields: [
    {
      name: "maxSentences",
      type: "integer",
      required: false,
      default: 3,
      description: "Sentences to keep, 1 to 10",
    },
    FIELD_DOC,
  ],
  parseConfig: (config) => parseSkillConfig(summaryConfig, config),
};

// ---------------------------------------------------------------------------------------------------------------
// keywords
// ---------------------------------------------------------------------------------------------------------------

export const keywordsConfig = z
  .object({
    limit: z.number().int().min(1).max(50).default(10),
    field,
  })
  .strict();

export const keywordsSkill: SkillDefinition = {
  id: "keywords",
  title: "Keywords",
  description:
    "The brief's most frequent words, stop words left out, with their counts. Answers { keywords: [{ word, count }], " +
    "wordCount }.",
  capabilities: ["keywords", "text"],
  requiredSecrets: [],
  configFields: [
    { name: "limit", type: "integer", required: false, default: 10, description: "Keywords to answer, 1 to 50" },
    FIELD_DOC,
  ],
  parseConfig: (config) => parseSkillConfig(keywordsConfig, config),
};

// ---------------------------------------------------------------------------------------------------------------
// text-checks
// ---------------------------------------------------------------------------------------------------------------

const bound = z.number().int().min(0).max(10_000_000).optional();

export const textChecksConfig = z
  .object({
    keywords: z.array(z.string().trim().min(1, "must not be blank").max(200)).max(50).default([]),
    minChars: bound,
    maxChars: bound,
    minWords: bound,
    maxWords: bound,
    field,
  })
  .strict()
  .superRefine((c, ctx) => {
    for (const unit of ["Chars", "Words"] as const) {
      const min = c[`min${unit}`];
      const max = c[`max${unit}`];
      if (min !== undefined && max !== undefined && min > max) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: [`max${unit}`], message: `must be at least min${unit}` });
      }
    }
  });

export const textChecksSkill: SkillDefinition = {
  id: "text-checks",
  title: "Length and keyword checks",
  description:
    "Counts the brief's words, characters and lines and checks it holds every configured keyword (case-insensitively) " +
    "within the configured bounds. Answers { wordCount, charCount, lines, containsAll, missing, lengthOk, problems, " +
    "passed }.",
  capabilities: ["text-checks"],
  requiredSecrets: [],
  configFields: [
    { name: "keywords", type: "string[]", required: false, default: [], description: "Keywords the text must hold" },
    { name: "minChars", type: "integer", required: false, description: "Fewest characters (code points)" },
    { name: "maxChars", type: "integer", required: false, description: "Most characters (code points)" },
    { name: "minWords", type: "integer", required: false, description: "Fewest words" },
    { name: "maxWords", type: "integer", required: false, description: "Most words" },
    FIELD_DOC,
  ],
  parseConfig: (config) => parseSkillConfig(textChecksConfig, config),
};

// ---------------------------------------------------------------------------------------------------------------
// json
// ---------------------------------------------------------------------------------------------------------------

export const jsonConfig = z
  .object({
    pick: z.array(dottedPath).max(100).default([]),
    rename: z.record(dottedPath, dottedPath).default({}),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (Object.keys(c.rename).length > 100) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["rename"], message: "at most 100 entries" });
    }
    if (c.pick.length === 0) return;
    for (const from of Object.keys(c.rename)) {
      if (!c.pick.includes(from)) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["rename", from], message: "must be one of the pick paths" });
      }
    }
  });

export type JsonReshape = z.output<typeof jsonConfig>;

export const jsonSkill: SkillDefinition = {
  id: "json",
  title: "JSON validation and reshaping",
  description:
    "Checks the brief is JSON (or holds a JSON object) and answers it reshaped: `pick` keeps only the listed dotted " +
    "paths, `rename` moves a path to a new one. A brief that is not JSON, or lacks a named path, fails the job.",
  capabilities: ["json"],
  requiredSecrets: [],
  configFields: [
    { name: "pick", type: "string[]", required: false, default: [], description: "Dotted paths to keep (all if none)" },
    {
      name: "rename",
      type: "record<string,string>",
      required: false,
      default: {},
      description: "Dotted path -> new dotted path",
    },
  ],
  parseConfig: (config) => parseSkillConfig(jsonConfig, config),
};

// ---------------------------------------------------------------------------------------------------------------
// webhook
// ---------------------------------------------------------------------------------------------------------------

export const WEBHOOK_DEFAULT_TIMEOUT_MS = 30_000;
export const WEBHOOK_MAX_TIMEOUT_MS = 120_000;

const webhookConfig = z
  .object({
    url: z.string().max(2000),
    capabilities: z
      .array(capability)
      .min(1, "must list at least one capability the endpoint serves")
      .max(20, "at most 20 capabilities"),
    timeoutMs: z.number().int().min(100).max(WEBHOOK_MAX_TIMEOUT_MS).default(WEBHOOK_DEFAULT_TIMEOUT_MS),
  })
  .strict();

export type WebhookConfig = z.output<typeof webhookConfig>;

const isLocalName = (host: string) => host === "localhost" || host.endsWith(".localhost");

/**
 * Checks the endpoint's URL without resolving it: https (http only to a loopback or private host when private
 * addresses are allowed), no credentials, not a literal non-public address unless allowed.
 */
function checkEndpointShape(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail("VALIDATION_ERROR", "config.url: must be an absolute URL (https://...)");
  }
  if (url.username || url.password) fail("VALIDATION_ERROR", "config.url: must not carry a user name or password");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const privateHost = net.isIP(host) ? !isPublicAddress(host) : isLocalName(host);
  if (url.protocol === "http:") {
    if (!(allowPrivate && privateHost)) {
      fail("VALIDATION_ERROR", "config.url: must be https (http only to a loopback or private host on a devnet)");
    }
  } else if (url.protocol !== "https:") {
    fail("VALIDATION_ERROR", `config.url: must be https, not ${url.protocol.replace(":", "")}`);
  }
  if (privateHost && !allowPrivate) {
    fail("WEBHOOK_URL_NOT_PUBLIC", `config.url: ${host} is not a public address (loopback and private are refused)`);
  }
  return url;
}

/** Parses a webhook install's config (see the module comment for the URL rules). */
export function parseWebhookConfig(raw: unknown, options: SkillConfigOptions = {}): WebhookConfig {
  const config = parseSkillConfig(webhookConfig, raw);
  return { ...config, url: checkEndpointShape(config.url, options.allowPrivateAddresses ?? false).toString() };
}

export const webhookSkill: SkillDefinition = {
  id: "webhook",
  title: "Webhook (any model or program)",
  description:
    "POSTs each task's brief to your HTTPS endpoint, signed with HMAC-SHA256 like event webhooks (X-Market-Signature: " +
    't=<unix seconds>,v1=<hex HMAC of "<t>.<body>"> under your signingSecret), and delivers the `result` of its JSON ' +
    "answer. Its capabilities are the ones you configure.",
  capabilities: [],
  capabilitiesOf: (config) => [...new Set(parseSkillConfig(webhookConfig, config).capabilities)],
  requiredSecrets: ["signingSecret"],
  configFields: [
    { name: "url", type: "string", required: true, description: "Your endpoint: https://..." },
    {
      name: "capabilities",
      type: "string[]",
      required: true,
      description: "The capabilities your endpoint serves (1 to 20): the tasks the agent takes for it",
    },
    {
      name: "timeoutMs",
      type: "integer",
      required: false,
      default: WEBHOOK_DEFAULT_TIMEOUT_MS,
      description: `How long to wait for the answer, 100 to ${WEBHOOK_MAX_TIMEOUT_MS} ms`,
    },
  ],
  parseConfig: (config, options) => parseWebhookConfig(config, options),
};

// ---------------------------------------------------------------------------------------------------------------
// verifier
// ---------------------------------------------------------------------------------------------------------------

export const verifierSkill: SkillDefinition = {
  id: "verifier",
  title: "Verifier",
  description:
    "Judges delivered work against a task's criteria (min_length, contains_keywords, required_fields, regex_pattern) " +
    "with the marketplace's own rules, so the agent can serve as a verifier agent. As a task, its brief is JSON " +
    "{ criteria, result }; it answers { passed, reason }.",
  capabilities: ["verify"],
  requiredSecrets: [],
  configFields: [],
  parseConfig: (config) => parseSkillConfig(z.object({}).strict(), config),
};
