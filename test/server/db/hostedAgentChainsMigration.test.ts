/**
 * Migration 017_hosted_agent_chains on a database with hosted agents made before it: each keeps the posting chain it
 * ran on (the chain the migration is given), its skills stay, and the owner API reads and changes the chains
 * afterwards (SQLite, or PostgreSQL with DATABASE_URL).
 */
import crypto from "node:crypto";
import fs from "node:fs";
import { expect } from "chai";
import { Wallet } from "ethers";
import { createDb } from "../../../server/db/knex";
import { migrateLatest } from "../../../server/db/migrations";
import {
  findHostedAgent,
  listInstalledSkills,
  updateAgentSettings,
} from "../../../server/db/repositories/hostedAgents";
import { insertHostedAgent } from "../../helpers/hostedAgentRows";
import { freshDbOptions } from "../../helpers/db";

describe("migration 017_hosted_agent_chains", () => {
  it("gives the agents made before it the posting chain they ran on; the chains then change like any setting", async () => {
    const { options, dir } = freshDbOptions();
    const db = createDb(options);
    const kek = crypto.randomBytes(32);
    try {
      expect(await migrateLatest(db, { postingChain: "arc", until: "016_api_key_expiry" })).to.include(
        "016_api_key_expiry",
      );
      const wallet = Wallet.createRandom();
      const before = await insertHostedAgent(db, kek, {
        privateKey: wallet.privateKey,
        wallet: wallet.address,
        capabilities: ["klingon"],
        skills: [{ skill: "summary" }],
      });

      expect(await migrateLatest(db, { postingChain: "arc", until: "017_hosted_agent_chains" })).to.deep.equal([
        "017_hosted_agent_chains",
      ]);
      const migrated = (await findHostedAgent(db, before.id))!;
      expect(migrated.chains).to.deep.equal(["arc"]);
      expect(migrated.capabilities).to.deep.equal(["klingon"]);
      expect((await listInstalledSkills(db, [before.id])).map((s) => s.skill)).to.deep.equal(["summary"]);

      expect(await updateAgentSettings(db, before.id, { chains: ["arc", "base"] }, 100)).to.equal(true);
      const changed = (await findHostedAgent(db, before.id))!;
      expect(changed.chains).to.deep.equal(["arc", "base"]);
      expect(changed.generation).to.equal(1);
      expect(changed.capabilities).to.deep.equal(["klingon"]);
    } finally {
      if (options.pgSchema) await db.raw(`drop schema if exists "${options.pgSchema}" cascade`);
      await db.destroy();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
