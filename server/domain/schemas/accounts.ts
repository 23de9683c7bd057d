/** Schemas of the accounts routes' answers: sign-in nonce and session, API keys, whoami. */
import { z } from "./common";

// ---------------------------------------------------------------------------------------------------------------
// A signed EIP-4361 message (sign-in, a hosted agent's key export)
// ---------------------------------------------------------------------------------------------------------------

/** Largest signed message accepted (an EIP-4361 message with a few resources is well under 2 KB). */
const MAX_MESSAGE_CHARS = 8192;

/** The fields of a signed message, as sign-in and the key export take them (each route names its own object). */
export const signedMessageFields = {
  message: z
    .string()
    .min(1)
    .max(MAX_MESSAGE_CHARS)
    .openapi({ description: "The EIP-4361 message, exactly as signed (LF line ends)" }),
  signature: z
    .string()
    .regex(/^0x(?:[0-9a-fA-F]{128}|[0-9a-fA-F]{130})$/, "must be a 65-byte (or 64-byte compact) hex signature")
    .openapi({ description: "personal_sign (EIP-191) signature of the message by its address" }),
};

// ---------------------------------------------------------------------------------------------------------------
// Response schemas
// ---------------------------------------------------------------------------------------------------------------

const isoTime = z.string().openapi({ example: "2025-01-01T12:00:00.000Z", description: "ISO 8601, UTC" });

export const nonceResponseSchema = z
  .object({
    nonce: z.string().openapi({ example: "q3Yx8Lw0bN2kR7tVc1ZpH5sJ" }),
    issuedAt: isoTime,
    expiresAt: isoTime,
    domain: z.string().openapi({ example: "127.0.0.1:8787" }),
    uri: z.string().openapi({ example: "http://127.0.0.1:8787" }),
    chainId: z.number().int(),
    message: z.string().openapi({ description: "EIP-4361 message, ready to sign with personal_sign" }),
  })
  .openapi("SignInNonce");

export const sessionResponseSchema = z
  .object({
    sessionToken: z.string().openapi({ description: "ses_ followed by 64 hex; send as Authorization: Bearer" }),
    address: z.string().openapi({ description: "The signed-in wallet, lower-case" }),
    expiresAt: isoTime,
  })
  .openapi("SignInSession");

export const apiKeyCreatedSchema = z
  .object({
    id: z.number().int(),
    key: z.string().openapi({ description: "sk_ followed by 64 hex. Shown once: only its SHA-256 hash is stored" }),
    prefix: z.string().openapi({ example: "sk_3f9a01bc" }),
    label: z.string().nullable(),
    createdAt: isoTime,
    expiresAt: isoTime.nullable().openapi({
      description: "When a web session key ends on its own (SESSION_TTL_SECONDS after creation); null: never",
    }),
  })
  .openapi("ApiKeyCreated");

export const apiKeySchema = z
  .object({
    id: z.number().int(),
    prefix: z.string(),
    label: z.string().nullable(),
    createdAt: isoTime,
    revokedAt: isoTime.nullable(),
    lastUsedAt: isoTime.nullable(),
    expiresAt: isoTime.nullable().openapi({
      description: "When a web session key ends (or ended) on its own; null: an ordinary key, which never expires",
    }),
  })
  .openapi("ApiKey");

export const apiKeyListSchema = z.object({ keys: z.array(apiKeySchema) }).openapi("ApiKeyList");

export const apiKeyRevokedSchema = z
  .object({ id: z.number().int(), revoked: z.literal(true) })
  .openapi("ApiKeyRevoked");

export const whoamiSchema = z
  .object({
    address: z.string().openapi({ description: "The wallet the key acts as, lower-case" }),
    addresses: z.array(z.string()).openapi({ description: "The account's wallets (one per account here)" }),
  })
  .openapi("WhoAmI");

export type NonceResponse = z.infer<typeof nonceResponseSchema>;
export type SessionResponse = z.infer<typeof sessionResponseSchema>;
export type ApiKeyCreated = z.infer<typeof apiKeyCreatedSchema>;
export type ApiKeyView = z.infer<typeof apiKeySchema>;
