import { expect } from "chai";
import { time } from "@nomicfoundation/hardhat-network-helpers";
import { startMarket, type Market } from "../../helpers/market";

async function stats(m: Market) {
  const res = await m.api.request("GET", "/api/v1/stats");
  expect(res.status).to.equal(200);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return res.json.data as Record<string, any>;
}

describe("GET /api/v1/stats counts real records", () => {
  it("counts open tasks, agents (registered or working), active agents, accounts and completed tasks", async () => {
    const m = await startMarket();
    try {
      // The poster has an API key: one account, no agent, nothing listed.
      expect(await stats(m)).to.deep.equal({
        openTasks: 0,
        totalAgents: 0,
        activeAgents: 0,
        registeredUsers: 1,
        completedTasks: 0,
        byChain: { base: { openTasks: 0, completedTasks: 0 } },
      });
      const agent = await m.newAgent(); // registered now, with an API key
      await m.list();
      await m.list();
      expect(await stats(m)).to.deep.equal({
        openTasks: 2,
        totalAgents: 1,
        activeAgents: 1,
        registeredUsers: 2,
        completedTasks: 0,
        byChain: { base: { openTasks: 2, completedTasks: 0 } },
      });
      // Eleven minutes of chain time without a heartbeat: still an agent, no longer active; the tasks lapsed too.
      await time.increase(11 * 60);
      await m.api.synced();
      const later = await stats(m);
      expect(later).to.include({ totalAgents: 1, activeAgents: 0, registeredUsers: 2 });
      void agent;
    } finally {
      await m.api.close();
    }
  });
});
