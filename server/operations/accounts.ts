/**
 * Accounts: sign-in with Ethereum (nonce, verify) and API keys (create, list, revoke, whoami). Key management takes
 * a session or a key of the same wallet; whoami takes an API key (or a hosted agent's token: its agent's wallet). A
 * hosted agent's token may not create or revoke keys (DELEGATION_DISABLED).
 */
import { defineOperation, type AnyOperation, type Caller } from "./operation";
import { address, z } from "../domain/schemas/common";
import { missingCredential } from "../domain/callers";
import { createApiKey, issueNonce, listApiKeys, revokeApiKey, signIn, whoami } from "../domain/accounts";
import {
  apiKeyCreatedSchema,
  apiKeyListSchema,
  apiKeyRevokedSchema,
  nonceResponseSchema,
  sessionResponseSchema,
  signedMessageFields,
  whoamiSchema,
} from "../domain/schemas/accounts";

const MAX_KEY_ID = 2_147_483_647;

/** The authenticated wallet; the router already answered 401 when a required credential is absent. */
function walletOf(caller: Caller | undefined, acceptsSession: boolean): string {
  if (!caller) throw missingCredential(acceptsSession);
  return caller.wallet;
}

const nonceBody = z.object({ address }).strict().openapi("SignInNonceRequest");

const verifyBody = z.object(signedMessageFields).strict().openapi("SignInVerifyRequest");

const createKeyBody = z
  .object({
    label: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .regex(/^[^\p{Cc}]*$/u, "must not contain control characters")
      .nullable()
      .optional(),
    sessionKey: z
      .boolean()
      .optional()
      .openapi({
        description:
          "true: a web session key, which expires on its own SESSION_TTL_SECONDS (1 hour) after creation, as the " +
          "sign-in session does (the web app makes one per sign-in); absent or false: an ordinary key, which never expires",
      }),
  })
  .strict()
  .openapi("ApiKeyCreateRequest");

const keyIdParams = z.object({
  id: z.coerce
    .number({ invalid_type_error: "must be a key id" })
    .int()
    .min(1)
    .max(MAX_KEY_ID)
    .openapi({ type: "integer", example: 1 }),
});

export const nonceRoute = defineOperation({
  mcp: { restOnly: "account and API-key management is the owner's own, by sign-in session or key (web app, CLI)" },
  method: "post",
  path: "/api/v1/auth/nonce",
  summary: "Start a sign-in with Ethereum: a nonce for the address and the EIP-4361 message to sign",
  description: "The nonce is single use, bound to the address, and valid for 10 minutes (SIWE_NONCE_TTL_SECONDS).",
  tags: ["accounts"],
  auth: "none",
  request: { body: nonceBody },
  response: nonceResponseSchema,
  errors: ["VALIDATION_ERROR"],
  handler: ({ body, deps }) => issueNonce(deps, body.address),
});

export const verifyRoute = defineOperation({
  mcp: { restOnly: "account and API-key management is the owner's own, by sign-in session or key (web app, CLI)" },
  method: "post",
  path: "/api/v1/auth/verify",
  summary: "Finish a sign-in with Ethereum: trade the signed message for a session token",
  description:
    "The session token (ses_ + 64 hex) manages API keys (Authorization: Bearer). Other routes take API keys only.",
  tags: ["accounts"],
  auth: "none",
  request: { body: verifyBody },
  response: sessionResponseSchema,
  errors: ["VALIDATION_ERROR", "MISSING_FIELDS", "BAD_SIGNATURE", "NONCE_INVALID", "NONCE_MISMATCH"],
  handler: ({ body, deps }) => signIn(deps, body),
});

export const createKeyRoute = defineOperation({
  mcp: { restOnly: "account and API-key management is the owner's own, by sign-in session or key (web app, CLI)" },
  method: "post",
  path: "/api/v1/api-keys",
  summary: "Create an API key acting as the signed-in wallet (the key is shown once)",
  description:
    "Takes a session or an API key of the wallet. Send {} when there is no label. A wallet holds at most " +
    "API_MAX_KEYS_PER_WALLET (20) active keys (neither revoked nor expired): over it 409 KEY_LIMIT (revoke one " +
    "first). With sessionKey: true the key is a web session key: it expires SESSION_TTL_SECONDS after creation, and " +
    "then answers 401 UNAUTHORIZED saying the session expired.",
  tags: ["accounts"],
  auth: "required",
  acceptsSession: true,
  refusesAgentTokens: true,
  request: { body: createKeyBody },
  response: apiKeyCreatedSchema,
  successStatus: 201,
  errors: ["UNAUTHORIZED", "VALIDATION_ERROR", "DELEGATION_DISABLED", "KEY_LIMIT"],
  handler: ({ body, caller, deps }) =>
    createApiKey(deps, walletOf(caller, true), body.label ?? null, { sessionKey: body.sessionKey === true }),
});

export const listKeysRoute = defineOperation({
  mcp: { restOnly: "account and API-key management is the owner's own, by sign-in session or key (web app, CLI)" },
  method: "get",
  path: "/api/v1/api-keys",
  summary: "The wallet's API keys (prefix and dates, never the key)",
  tags: ["accounts"],
  auth: "required",
  acceptsSession: true,
  refusesAgentTokens: true,
  response: apiKeyListSchema,
  errors: ["UNAUTHORIZED", "DELEGATION_DISABLED"],
  handler: ({ caller, deps }) => listApiKeys(deps, walletOf(caller, true)),
});

export const whoamiRoute = defineOperation({
  mcp: { restOnly: "account and API-key management is the owner's own, by sign-in session or key (web app, CLI)" },
  method: "get",
  path: "/api/v1/api-keys/whoami",
  summary: "The wallet this API key acts as",
  description: "API keys only: a session token answers 401.",
  tags: ["accounts"],
  auth: "required",
  response: whoamiSchema,
  errors: ["UNAUTHORIZED"],
  handler: ({ caller }) => whoami(walletOf(caller, false)),
});

export const revokeKeyRoute = defineOperation({
  mcp: { restOnly: "account and API-key management is the owner's own, by sign-in session or key (web app, CLI)" },
  method: "delete",
  path: "/api/v1/api-keys/:id",
  summary: "Revoke one of the wallet's API keys, effective on the next request",
  description: "Idempotent for the wallet's own keys. Another wallet's key or an unknown id answers NOT_FOUND.",
  tags: ["accounts"],
  auth: "required",
  acceptsSession: true,
  refusesAgentTokens: true,
  request: { params: keyIdParams },
  response: apiKeyRevokedSchema,
  errors: ["UNAUTHORIZED", "VALIDATION_ERROR", "NOT_FOUND", "DELEGATION_DISABLED"],
  handler: ({ params, caller, deps }) => revokeApiKey(deps, walletOf(caller, true), params.id),
});

export const accountRoutes: AnyOperation[] = [
  nonceRoute,
  verifyRoute,
  createKeyRoute,
  listKeysRoute,
  whoamiRoute,
  revokeKeyRoute,
];
