import type { Migration } from "./migration";

export const services: Migration = {
  name: "006_services",
  async up(db) {
    // Rent-an-agent services: priced offerings of a registered agent.
    await db.schema.createTable("services", (t) => {
      t.increments("id").primary();
      t.string("agent_address", 42).notNullable();
      t.string("name", 100).notNullable();
      t.text("description").notNullable();
      t.string("price_raw", 80).notNullable(); // smallest units of the settlement token, decimal
      t.string("token", 42).notNullable(); // the settlement token when the service was listed
      t.text("capabilities").notNullable(); // JSON array, sorted, lower-case
      t.bigInteger("delivery_seconds").nullable();
      t.boolean("active").notNullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("updated_at").notNullable();
      t.index(["agent_address", "active"]);
      t.index(["active", "id"]);
    });
    // The service terms a rental was listed with, immutable with the listing.
    await db.schema.alterTable("listings", (t) => {
      t.text("service_terms").nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable("listings", (t) => {
      t.dropColumn("service_terms");
    });
    await db.schema.dropTableIfExists("services");
  },
};
