import type { Migration } from "./migration";

/**
 * MCP authorization (docs/oauth.md), the authorization server's records:
 * - oauth_clients: clients registered by Dynamic Client Registration (RFC 7591; client_id `mcp_` and 32 hex) and
 *   clients known by their Client ID Metadata Document (client_id an https URL; the document as last fetched);
 * - oauth_codes: authorization codes (by SHA-256 hash), single use, with the PKCE S256 challenge, redirect URI,
 *   granted scope and resource, and the grant its exchange created;
 * - oauth_grants: one owner's approval of one client (a token family): revoking it ends every token of the family;
 * - oauth_tokens: access and refresh tokens (by SHA-256 hash) of a grant; a refresh token is rotated once
 *   (rotated_at), and presenting a rotated one again revokes its grant.
 */
export const oauth: Migration = {
  name: "015_oauth",
  async up(db) {
    await db.schema.createTable("oauth_clients", (t) => {
      t.string("client_id", 512).primary();
      t.string("kind", 8).notNullable(); // "dcr" | "cimd"
      t.string("client_name", 200).nullable();
      t.string("client_uri", 512).nullable();
      t.text("redirect_uris").notNullable(); // JSON array
      t.text("metadata").notNullable(); // JSON: the registered or fetched metadata
      t.bigInteger("created_at").notNullable();
      t.bigInteger("fetched_at").nullable();
    });
    await db.schema.createTable("oauth_codes", (t) => {
      t.string("code_hash", 66).primary();
      t.string("client_id", 512).notNullable();
      t.string("wallet", 42).notNullable();
      t.string("redirect_uri", 2048).notNullable();
      t.string("code_challenge", 128).notNullable();
      t.string("scope", 200).notNullable();
      t.string("resource", 512).notNullable();
      t.bigInteger("expires_at").notNullable();
      t.bigInteger("used_at").nullable();
      t.integer("grant_id").nullable(); // the grant its exchange created: revoked if the code comes back
    });
    await db.schema.createTable("oauth_grants", (t) => {
      t.increments("id").primary();
      t.string("client_id", 512).notNullable();
      t.string("wallet", 42).notNullable();
      t.string("scope", 200).notNullable();
      t.string("resource", 512).notNullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("last_used_at").nullable();
      t.bigInteger("revoked_at").nullable();
      t.string("revoked_reason", 32).nullable();
      t.index(["wallet", "revoked_at"]);
    });
    await db.schema.createTable("oauth_tokens", (t) => {
      t.string("token_hash", 66).primary();
      t.string("kind", 8).notNullable(); // "access" | "refresh"
      t.integer("grant_id").notNullable().references("id").inTable("oauth_grants").onDelete("CASCADE");
      t.bigInteger("expires_at").notNullable();
      t.bigInteger("rotated_at").nullable();
      t.index(["grant_id"]);
    });
  },
  async down(db) {
    await db.schema.dropTableIfExists("oauth_tokens");
    await db.schema.dropTableIfExists("oauth_grants");
    await db.schema.dropTableIfExists("oauth_codes");
    await db.schema.dropTableIfExists("oauth_clients");
  },
};
