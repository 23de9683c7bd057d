import type { Migration } from "./migration";

/**
 * auth_nonces.purpose: what a nonce was issued for ("sign-in", or "key-export:<agent id>"), so a message signed for
 * one purpose (a hosted agent's key export) cannot be spent for another (a sign-in). Nonces issued before this
 * migration were sign-in nonces (the key export's last at most SIWE_NONCE_TTL_SECONDS; such a leftover challenge is
 * refused and asked again).
 */
export const noncePurpose: Migration = {
  name: "012_nonce_purpose",
  async up(db) {
    await db.schema.alterTable("auth_nonces", (t) => {
      t.string("purpose", 80).notNullable().defaultTo("sign-in");
    });
  },
  async down(db) {
    await db.schema.alterTable("auth_nonces", (t) => {
      t.dropColumn("purpose");
    });
  },
};
