/**
 * The reads' caches never serve a view older than the database: a write committed by any process (here another
 * connection, as a standalone indexer's would be) shows at the next read of the open-task list, of one task, and of
 * the MCP and A2A pages built on them, on SQLite and on PostgreSQL (DATABASE_URL).
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { CATEGORY, DAY, USDC, ZONE, deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi, type TestApi } from "../../helpers/api";
import { TASK_STATUS } from "../../../server/escrow/records";

const OPEN = "/api/v1/a2a/tasks";
const ENV = { RATE_IP_PER_WINDOW: "100000", RATE_WALLET_FAMILY_PER_MINUTE: "100000" };

async function setup() {
  const fx = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(fx.book, ENV);
  const key = await api.createKey(fx.poster.address);
  const token = await fx.usdc.getAddress();
  const listTask = async (text: string) => {
    const taskHash = ethers.sha256(ethers.toUtf8Bytes(text));
    const tx = await fx.escrow.connect(fx.poster).createTask(taskHash, token, USDC(10), CATEGORY, ZONE, DAY);
    await tx.wait();
    const res = await api.request("POST", "/api/v1/a2a/tasks/index", { key, body: { txHash: tx.hash, taskHash } });
    expect(res.status, res.text).to.equal(200);
    return { taskId: res.json.data.onChainTaskId as number, taskHash };
  };
  return { ...fx, api, key, listTask };
}

async function openIds(api: TestApi): Promise<number[]> {
  const res = await api.request("GET", OPEN);
  expect(res.status, res.text).to.equal(200);
  return res.json.data.tasks.map((t: { meta: { onChainTaskId: number } }) => t.meta.onChainTaskId);
}

async function taskStatus(api: TestApi, id: number | string) {
  const res = await api.request("GET", `/api/v1/tasks/${id}`);
  expect(res.status, res.text).to.equal(200);
  return { onChain: res.json.data.status as number, market: res.json.data.a2aState.status as string };
}

describe("reads after writes: the caches of the open list and of one task", () => {
  it("a status change committed by another process shows at the next read of the list and of the task", async () => {
    const { api, listTask } = await setup();
    try {
      await api.synced();
      const { taskId, taskHash } = await listTask("fresh: cancelled elsewhere");
      const kept = await listTask("fresh: stays open");
      await api.synced();
      // Read twice: the second read is served from the caches.
      for (let i = 0; i < 2; i++) {
        expect(await openIds(api)).to.include.members([taskId, kept.taskId]);
        expect(await taskStatus(api, taskId)).to.deep.equal({ onChain: TASK_STATUS.Funded, market: "open" });
        expect(await taskStatus(api, taskHash)).to.deep.equal({ onChain: TASK_STATUS.Funded, market: "open" });
      }
      // Another process's indexer commits the cancellation (its own connection to the same database).
      const other = api.testDb.reopen();
      await other("tasks").where({ chain: "base", task_id: taskId }).update({ status: TASK_STATUS.Cancelled });
      const open = await openIds(api);
      expect(open).to.not.include(taskId);
      expect(open).to.include(kept.taskId);
      const cancelled = { onChain: TASK_STATUS.Cancelled, market: "cancelled" };
      expect(await taskStatus(api, taskId)).to.deep.equal(cancelled);
      expect(await taskStatus(api, taskHash)).to.deep.equal(cancelled);
    } finally {
      await api.close();
    }
  });

  it("a task listed by another process shows at the next read of the list", async () => {
    const { api, listTask, escrow, poster, usdc } = await setup();
    try {
      const first = await listTask("fresh: listed here");
      await api.synced();
      expect(await openIds(api)).to.deep.equal([first.taskId]);
      // Funded and indexed here, listed by another API process: its listing row is written by its own connection.
      const taskHash = ethers.sha256(ethers.toUtf8Bytes("fresh: listed elsewhere"));
      const tx = await escrow
        .connect(poster)
        .createTask(taskHash, await usdc.getAddress(), USDC(10), CATEGORY, ZONE, DAY);
      await tx.wait();
      await api.synced();
      expect(await openIds(api)).to.deep.equal([first.taskId]);
      const other = api.testDb.reopen();
      const row = await other("listings").where({ chain: "base", task_id: first.taskId }).first();
      await other("listings").insert({ ...row, task_id: first.taskId + 1, task_hash: taskHash, tx_hash: tx.hash });
      expect(await openIds(api)).to.deep.equal([first.taskId + 1, first.taskId]);
    } finally {
      await api.close();
    }
  });

  it("the task indexed by this process's indexer shows at the next read (a cancellation on the chain)", async () => {
    const { api, listTask, escrow, poster } = await setup();
    try {
      const { taskId } = await listTask("fresh: cancelled on chain");
      await api.synced();
      expect(await taskStatus(api, taskId)).to.deep.equal({ onChain: TASK_STATUS.Funded, market: "open" });
      expect(await openIds(api)).to.include(taskId);
      await (await escrow.connect(poster).cancelTask(taskId)).wait();
      await api.synced();
      expect(await taskStatus(api, taskId)).to.deep.equal({ onChain: TASK_STATUS.Cancelled, market: "cancelled" });
      expect(await openIds(api)).to.not.include(taskId);
    } finally {
      await api.close();
    }
  });
});
