/**
 * The agent's work list (GET /a2a/tasks/working, server/domain/listing.ts listWorkingTasks) and the funding
 * transaction hash on task reads (GET /tasks/{hash}, /a2a/tasks/posted, /a2a/tasks/working).
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { withMarket } from "../../helpers/market";
import { assignKey } from "../../../server/verifier/types";

const WORKING = "/api/v1/a2a/tasks/working";

describe("GET /a2a/tasks/working and the funding transaction hash", function () {
  this.timeout(120_000);

  it("lists the caller's tasks as worker, newest first, with state, and nobody else's", () =>
    withMarket(async (m) => {
      const agent = await m.newAgent();
      const other = await m.newAgent();
      const first = await m.list();
      const second = await m.list();
      const untaken = await m.list();
      expect((await m.api.request("GET", WORKING, { key: agent.key })).json.data).to.deep.equal({
        tasks: [],
        total: 0,
      });
      for (const t of [first, second]) {
        const res = await m.post(`/api/v1/a2a/tasks/${t.taskHash}/accept`, agent.key);
        expect(res.status, res.text).to.equal(200);
        await m.marketVerifier.settled(assignKey(t.taskId));
      }
      await m.api.synced();
      const mine = await m.api.request("GET", WORKING, { key: agent.key });
      expect(mine.status, mine.text).to.equal(200);
      expect(mine.json.data.total).to.equal(2);
      expect(mine.json.data.tasks.map((t: { meta: { taskHash: string } }) => t.meta.taskHash)).to.deep.equal([
        second.taskHash,
        first.taskHash,
      ]);
      for (const t of mine.json.data.tasks) {
        expect(t.state).to.deep.equal({ status: "assigned", onChainStatus: 1 });
        expect(t.onChain.worker).to.equal(agent.address);
        expect(t.resultData).to.equal(null);
      }
      const page = await m.api.request("GET", `${WORKING}?limit=1&offset=1`, { key: agent.key });
      expect(page.json.data.tasks.map((t: { meta: { taskHash: string } }) => t.meta.taskHash)).to.deep.equal([
        first.taskHash,
      ]);
      expect(page.json.data.total).to.equal(2);
      const theirs = await m.api.request("GET", WORKING, { key: other.key });
      expect(theirs.json.data).to.deep.equal({ tasks: [], total: 0 });
      expect(untaken).to.not.equal(undefined);
      expect((await m.api.request("GET", WORKING)).status).to.equal(401);
    }));

  it("shows the funding transaction on GET /tasks/{hash}, the posted list and the work list", () =>
    withMarket(async (m) => {
      const agent = await m.newAgent();
      const { taskHash, taskId } = await m.list();
      const created = (await m.escrow.queryFilter(m.escrow.filters.TaskCreated(taskId)))[0];
      const fundingTx = created.transactionHash.toLowerCase();
      expect(fundingTx).to.match(/^0x[0-9a-f]{64}$/);

      const detail = await m.api.request("GET", `/api/v1/tasks/${taskHash}`);
      expect(detail.json.data.fundingTxHash).to.equal(fundingTx);
      expect(detail.json.data.a2aMeta.fundingTxHash).to.equal(fundingTx);
      const byId = await m.api.request("GET", `/api/v1/tasks/${taskId}`);
      expect(byId.json.data.a2aMeta.fundingTxHash).to.equal(fundingTx);
      const posted = await m.api.request("GET", "/api/v1/a2a/tasks/posted", { key: m.posterKey });
      expect(posted.json.data.tasks[0].meta.fundingTxHash).to.equal(fundingTx);
      expect(posted.json.data.tasks[0].onChain.fundingTxHash).to.equal(fundingTx);
      const receipt = await ethers.provider.getTransactionReceipt(fundingTx);
      expect(receipt!.status).to.equal(1);

      expect((await m.post(`/api/v1/a2a/tasks/${taskHash}/accept`, agent.key)).status).to.equal(200);
      const working = await m.api.request("GET", WORKING, { key: agent.key });
      expect(working.json.data.tasks[0].meta.fundingTxHash).to.equal(fundingTx);
    }));
});
