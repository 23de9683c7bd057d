/**
 * Sign-out ends the session token the request presents: REST only, since it acts on the Authorization header itself
 * rather than on an input (the web app and the SDK's signOut call it).
 */
import { z } from "../../domain/schemas/common";
import { missingCredential } from "../../domain/callers";
import { signOut } from "../../domain/accounts";
import { defineOperation } from "../../operations/operation";
import { presentedCredential } from "../../protocols/http/credential";

const signedOutSchema = z.object({ signedOut: z.literal(true) }).openapi("SignOutResponse");

export const signOutRoute = defineOperation({
  mcp: { restOnly: "ends the session token the HTTP request presents; MCP clients hold keys or OAuth tokens" },
  method: "post",
  path: "/api/v1/auth/signout",
  summary: "Sign out: end the presented session token",
  description:
    "Takes the session token as Authorization: Bearer ses_...; it answers 401 from the next request on, on every " +
    "API process. An API key is not a session (VALIDATION_ERROR): revoke it with DELETE /api/v1/api-keys/{id}.",
  tags: ["accounts"],
  auth: "required",
  acceptsSession: true,
  refusesAgentTokens: true,
  response: signedOutSchema,
  errors: ["UNAUTHORIZED", "VALIDATION_ERROR", "DELEGATION_DISABLED"],
  handler: ({ caller, ctx, deps }) => {
    if (!caller) throw missingCredential(true);
    return signOut(deps, presentedCredential(ctx) ?? "");
  },
});
