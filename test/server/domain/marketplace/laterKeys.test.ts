/**
 * POST /a2a/tasks/{hash}/keys (server/domain/marketplace/laterKeys.ts): a private task listed without a key for an
 * agent is not a dead end. The agent meets NEEDS_WRAP, the poster wraps the brief key to the agent's registered
 * public key and adds it, the agent's accept then hands out that key and the agent reads the brief.
 */
import { expect } from "chai";
import { CUSTODY_KEY, withMarket } from "../../../helpers/market";
import type { ApiResponse } from "../../../helpers/api";
import {
  agentPublicKey,
  decryptBrief,
  encryptBrief,
  unwrapBriefKey,
  wrapBriefKey,
} from "../../../../server/domain/briefs";

const keysPath = (hash: string) => `/api/v1/a2a/tasks/${hash}/keys`;
const acceptPath = (hash: string) => `/api/v1/a2a/tasks/${hash}/accept`;

function expectError(res: ApiResponse, status: number, code: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.json.error.code, res.text).to.equal(code);
}

describe("POST /a2a/tasks/{hash}/keys: the poster wraps a private brief to more agents after listing", function () {
  this.timeout(120_000);

  it("turns NEEDS_WRAP into an accept whose key opens the brief; listing terms stay as indexed", () =>
    withMarket(async (m) => {
      const agent = await m.newAgent();
      const { blob, key: briefKey } = encryptBrief(Buffer.from("summarise the attached contract"));
      const upload = await m.post("/api/v1/storage/upload", m.posterKey, { data: blob.toString("base64") });
      expect(upload.status, upload.text).to.equal(201);
      const { taskHash, taskId } = await m.list(
        { privacy: "private", rootHash: upload.json.data.rootHash },
        { taskHash: upload.json.data.rootHash },
      );
      expectError(await m.post(acceptPath(taskHash), agent.key), 403, "NEEDS_WRAP");

      // The poster reads the agent's public key from the executors list, as docs/api.md says.
      const executors = await m.api.request("GET", "/api/v1/a2a/executors?limit=200");
      expect(executors.status, executors.text).to.equal(200);
      const { publicKey } = executors.json.data.executors.find((e: { address: string }) => e.address === agent.address);
      expect(publicKey).to.equal(agent.publicKey);
      const wrapped = wrapBriefKey(briefKey, publicKey);
      const added = await m.post(keysPath(taskHash), m.posterKey, { wrappedKeys: { [agent.address]: wrapped } });
      expect(added.status, added.text).to.equal(200);
      expect(added.json.data).to.deep.equal({ taskHash, onChainTaskId: taskId, agents: [agent.address] });
      // The same key again is accepted (a retried request).
      expect(
        (await m.post(keysPath(taskHash), m.posterKey, { wrappedKeys: { [agent.address]: wrapped } })).status,
      ).to.equal(200);

      const accepted = await m.post(acceptPath(taskHash), agent.key);
      expect(accepted.status, accepted.text).to.equal(200);
      const opened = unwrapBriefKey(accepted.json.data.wrappedKey, agent.privateKey);
      expect(decryptBrief(blob, opened).toString()).to.equal("summarise the attached contract");
      // Re-indexing with the first terms still answers 200 (the terms did not change).
      const detail = await m.api.request("GET", `/api/v1/tasks/${taskHash}`);
      const again = await m.post("/api/v1/a2a/tasks/index", m.posterKey, {
        txHash: detail.json.data.fundingTxHash,
        taskHash,
        privacy: "private",
        rootHash: upload.json.data.rootHash,
      });
      expect(again.status, again.text).to.equal(200);
    }));

  it("refuses in order: NOT_POSTER, PUBLIC_TASK_HAS_KEYS, NOT_REGISTERED, INVALID_DATA, KEY_ALREADY_WRAPPED, NOT_OPEN", () =>
    withMarket(async (m) => {
      const agent = await m.newAgent();
      const other = await m.newAgent();
      const { key: briefKey } = encryptBrief(Buffer.from("brief"));
      const wrapped = wrapBriefKey(briefKey, agent.publicKey);
      const { taskHash } = await m.list({
        privacy: "private",
        wrappedKeys: { [other.address]: wrapBriefKey(briefKey, other.publicKey) },
      });
      const body = { wrappedKeys: { [agent.address]: wrapped } };

      expectError(await m.post(keysPath(taskHash), agent.key, body), 403, "NOT_POSTER");
      const publicTask = await m.list();
      expectError(await m.post(keysPath(publicTask.taskHash), m.posterKey, body), 400, "PUBLIC_TASK_HAS_KEYS");
      const stranger = "0x" + "12".repeat(20);
      expectError(
        await m.post(keysPath(taskHash), m.posterKey, { wrappedKeys: { [stranger]: wrapped } }),
        403,
        "NOT_REGISTERED",
      );
      const short = await m.post(keysPath(taskHash), m.posterKey, { wrappedKeys: { [agent.address]: "01abcd" } });
      expectError(short, 400, "INVALID_DATA");
      expect(short.json.error.message).to.include(`wrappedKeys.${agent.address}`);
      // The poster listed a key for `other` already: another one for it is refused, the listed one accepted.
      const otherKey = wrapBriefKey(briefKey, other.publicKey);
      expectError(
        await m.post(keysPath(taskHash), m.posterKey, { wrappedKeys: { [other.address]: otherKey } }),
        409,
        "KEY_ALREADY_WRAPPED",
      );
      expectError(await m.post(keysPath(taskHash), m.posterKey, { wrappedKeys: {} }), 400, "VALIDATION_ERROR");
      const bad = await m.post(keysPath(taskHash), m.posterKey, { wrappedKeys: { nobody: wrapped } });
      expectError(bad, 400, "BAD_ADDRESS");

      // Once an agent took the task, keys for others are of no use: NOT_OPEN.
      expect((await m.post(acceptPath(taskHash), other.key)).status).to.equal(200);
      expectError(await m.post(keysPath(taskHash), m.posterKey, body), 409, "NOT_OPEN");
    }));

  it("publishes the custody public key a poster wraps to (null without a custody key), and it round-trips", async () => {
    await withMarket(async (m) => {
      expect((await m.api.request("GET", "/api/v1/health/settlement")).json.data.custodyPublicKey).to.equal(null);
    });
    await withMarket(
      async (m) => {
        const settlement = await m.api.request("GET", "/api/v1/health/settlement");
        const custody = settlement.json.data.custodyPublicKey;
        expect(custody).to.equal(agentPublicKey(CUSTODY_KEY));
        const agent = await m.newAgent();
        const { blob, key: briefKey } = encryptBrief(Buffer.from("custody route"));
        const { taskHash } = await m.list({ privacy: "private", custodyWrappedKey: wrapBriefKey(briefKey, custody) });
        const accepted = await m.post(acceptPath(taskHash), agent.key);
        expect(accepted.status, accepted.text).to.equal(200);
        const opened = unwrapBriefKey(accepted.json.data.wrappedKey, agent.privateKey);
        expect(decryptBrief(blob, opened).toString()).to.equal("custody route");
      },
      { CUSTODY_PRIVATE_KEY: CUSTODY_KEY },
    );
  });
});
