import type { Migration } from "./migration";

/**
 * Listings keep what the funding receipt proved (token, amount, creation-time deadline), so a listing reads whole
 * while the on-chain projection lags, and the custody copy of a private brief's key (used by later work).
 */
export const listingFunding: Migration = {
  name: "004_listings_funding",
  async up(db) {
    await db.schema.alterTable("listings", (t) => {
      t.string("token", 42).nullable();
      t.string("amount", 80).nullable();
      t.bigInteger("deadline").nullable();
      t.text("custody_wrapped_key").nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable("listings", (t) => {
      t.dropColumns("token", "amount", "deadline", "custody_wrapped_key");
    });
  },
};
