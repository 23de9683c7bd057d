import type { Migration } from "./migration";

/**
 * api_keys.expires_at: when a web session key ends on its own (unix seconds; SESSION_TTL_SECONDS after it was made),
 * null for an ordinary API key, which never expires. An expired key answers 401 and no longer counts toward
 * API_MAX_KEYS_PER_WALLET. Keys made before this migration are ordinary keys.
 */
export const apiKeyExpiry: Migration = {
  name: "016_api_key_expiry",
  async up(db) {
    await db.schema.alterTable("api_keys", (t) => {
      t.bigInteger("expires_at").nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable("api_keys", (t) => {
      t.dropColumn("expires_at");
    });
  },
};
