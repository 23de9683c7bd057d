/**
 * The OAuth scope each operation needs (docs/oauth.md, "Scopes"), derived from its declaration so a new operation is
 * mapped without a list to keep: reads (GET) need market:read; the poster's side (a posting family: uploads, builds,
 * listings; and assigning, cancelling, reclaiming, accepting or declining a submission, sharing a brief's key) needs
 * market:post; every other change needs market:work. API keys, sessions and hosted agents' tokens carry no scopes:
 * only an OAuth access token is checked.
 */
import { fail } from "../errors";
import type { AnyOperation, Caller } from "./operation";
import type { Scope } from "../domain/oauth";

/** Poster-only actions on a task that spend no posting bucket, by the last segment of their path. */
const POSTER_ACTIONS = new Set(["assign", "cancel", "reclaim", "finalize", "decline", "keys"]);

export function operationScope(operation: Pick<AnyOperation, "method" | "path" | "posting">): Scope {
  if (operation.method === "get") return "market:read";
  if (operation.posting) return "market:post";
  if (POSTER_ACTIONS.has(operation.path.split("/").pop() ?? "")) return "market:post";
  return "market:work";
}

/** INSUFFICIENT_SCOPE when an OAuth caller's grant lacks the scope `operation` needs. */
export function checkScope(
  operation: Pick<AnyOperation, "method" | "path" | "posting">,
  caller: Caller | undefined,
): void {
  if (!caller?.scopes) return;
  const needed = operationScope(operation);
  if (!caller.scopes.includes(needed)) {
    fail(
      "INSUFFICIENT_SCOPE",
      `this tool needs the OAuth scope ${needed}; the owner granted ${caller.scopes.join(", ") || "none"}: ` +
        "authorize again asking for it",
      { details: { requiredScope: needed, grantedScopes: [...caller.scopes] } },
    );
  }
}
