/**
 * The whole posting flow over HTTP against a Hardhat chain, as a careful client does it: sign in with the wallet,
 * get an API key, read the settlement record, upload the brief, build the transaction, check it before signing,
 * approve exactly the reward, send, index, and poll the posted tasks. Single private, single public, and a batch.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import { deployEscrowFixture, DAY, USDC } from "../helpers/fixtures";
import { startTestApi, type TestApi } from "../helpers/api";
import { agentPublicKey, decryptBrief, encryptBrief, unwrapBriefKey, wrapBriefKey } from "../../server/domain/briefs";
import { TaskEscrow__factory, MockUSDC__factory } from "../../typechain-types";

const escrowInterface = TaskEscrow__factory.createInterface();

/** Sign-in with Ethereum, then an API key, as a person would in the app. */
async function signInAndCreateKey(api: TestApi, wallet: HardhatEthersSigner): Promise<string> {
  const nonce = await api.request("POST", "/api/v1/auth/nonce", { body: { address: wallet.address } });
  expect(nonce.status, nonce.text).to.equal(200);
  const signature = await wallet.signMessage(nonce.json.data.message);
  const session = await api.request("POST", "/api/v1/auth/verify", {
    body: { message: nonce.json.data.message, signature },
  });
  expect(session.status, session.text).to.equal(200);
  const created = await api.request("POST", "/api/v1/api-keys", {
    body: { label: "e2e" },
    headers: { authorization: `Bearer ${session.json.data.sessionToken}` },
  });
  expect(created.status, created.text).to.equal(201);
  const whoami = await api.request("GET", "/api/v1/api-keys/whoami", { key: created.json.data.key });
  expect(whoami.json.data.address).to.equal(wallet.address.toLowerCase());
  return created.json.data.key;
}

/** The checks a careful client makes before signing (spec, Authentication rule 9). */
function checkUnsignedTx(
  tx: { to: string; data: string; from: string; value?: string },
  expected: { escrow: string; wallet: string; chainId: number; responseChainId: number; fn: string },
) {
  expect(tx.to.toLowerCase(), "to is the escrow of the settlement record").to.equal(expected.escrow.toLowerCase());
  expect(tx.from.toLowerCase(), "from is the key's wallet").to.equal(expected.wallet.toLowerCase());
  expect(expected.responseChainId, "chain id matches").to.equal(expected.chainId);
  expect(BigInt(tx.value ?? "0"), "no value with an ERC-20 task").to.equal(0n);
  const decoded = escrowInterface.parseTransaction({ data: tx.data });
  expect(decoded?.name, "exactly the requested function").to.equal(expected.fn);
  return decoded!;
}

async function settlement(api: TestApi) {
  const res = await api.request("GET", "/api/v1/health/settlement");
  const chain = res.json.data.chains.find((c: { chain: string }) => c.chain === res.json.data.postingChain);
  expect(chain.postable).to.equal(true);
  return chain as {
    chainId: number;
    escrowAddress: string;
    token: { address: string };
    batchCreate: { supported: boolean; maxBatch: number };
  };
}

async function pollPosted(api: TestApi, key: string, taskHash: string) {
  for (let i = 0; i < 100; i++) {
    const posted = await api.request("GET", "/api/v1/a2a/tasks/posted", { key });
    const entry = posted.json.data.tasks.find((t: { meta: { taskHash: string } }) => t.meta.taskHash === taskHash);
    if (entry?.onChain) return entry;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`task ${taskHash} never appeared with its on-chain record`);
}

describe("e2e: the posting flow over HTTP", () => {
  it("posts a private task: encrypted brief, wrapped key, build, approve, send, index, poll", async () => {
    const { book, poster } = await loadFixture(deployEscrowFixture);
    const api = await startTestApi(book);
    try {
      const key = await signInAndCreateKey(api, poster);
      const chain = await settlement(api);
      const network = await ethers.provider.getNetwork();

      // An agent key to wrap the brief key to (agents publish theirs through the executors listing).
      const agentWallet = ethers.Wallet.createRandom();
      const { blob, key: briefKey } = encryptBrief(Buffer.from(JSON.stringify({ task: "Summarise the report" })));
      const wrapped = wrapBriefKey(briefKey, agentPublicKey(agentWallet.privateKey));

      const upload = await api.request("POST", "/api/v1/storage/upload", {
        key,
        body: { data: blob.toString("base64") },
      });
      expect(upload.status, upload.text).to.equal(201);
      const taskHash = upload.json.data.rootHash;
      expect(taskHash).to.equal(ethers.sha256(blob));

      const amount = USDC(25);
      const build = await api.request("POST", "/api/v1/tasks", {
        key,
        body: {
          taskHash,
          token: chain.token.address,
          amount: amount.toString(),
          locationZone: "global",
          duration: String(DAY),
          verificationMode: "manual",
          rootHash: taskHash,
          wrappedKeys: { [agentWallet.address]: wrapped },
          requiredCapabilities: ["summarise"],
        },
      });
      expect(build.status, build.text).to.equal(200);
      const decoded = checkUnsignedTx(build.json.data.unsignedTx, {
        escrow: chain.escrowAddress,
        wallet: poster.address,
        chainId: Number(network.chainId),
        responseChainId: build.json.data.chainId,
        fn: "createTask",
      });
      expect(decoded.args.taskHash).to.equal(taskHash);
      expect(decoded.args.amount).to.equal(amount);

      const usdc = MockUSDC__factory.connect(chain.token.address, poster);
      await (await usdc.approve(chain.escrowAddress, 0)).wait();
      await (await usdc.approve(chain.escrowAddress, amount)).wait(); // exactly the reward
      const sent = await poster.sendTransaction({
        to: build.json.data.unsignedTx.to,
        data: build.json.data.unsignedTx.data,
      });
      await sent.wait();

      const indexed = await api.request("POST", "/api/v1/a2a/tasks/index", {
        key,
        body: {
          txHash: sent.hash,
          taskHash,
          verificationMode: "manual",
          rootHash: taskHash,
          wrappedKeys: { [agentWallet.address]: wrapped },
          requiredCapabilities: ["summarise"],
        },
      });
      expect(indexed.status, indexed.text).to.equal(200);
      expect(indexed.json.data).to.include({ taskHash, indexed: true });

      const entry = await pollPosted(api, key, taskHash);
      expect(entry.state.status).to.equal("open");
      expect(entry.onChain.amount).to.equal(amount.toString());
      // The brief round-trips: download the blob, unwrap the key with the agent's private key, decrypt.
      const download = await fetch(`${api.url}/api/v1/storage/blobs/${taskHash}`);
      const stored = Buffer.from(await download.arrayBuffer());
      expect(
        JSON.parse(decryptBrief(stored, unwrapBriefKey(wrapped, agentWallet.privateKey)).toString()),
      ).to.deep.equal({
        task: "Summarise the report",
      });
      // Private: no key material in the public listing.
      const open = await api.request("GET", "/api/v1/a2a/tasks");
      expect(open.text).to.not.include(wrapped);
      expect(open.json.data.tasks.map((t: { meta: { taskHash: string } }) => t.meta.taskHash)).to.include(taskHash);
    } finally {
      await api.close();
    }
  });

  it("posts a public task whose brief is plaintext and shown in the open listing", async () => {
    const { book, poster } = await loadFixture(deployEscrowFixture);
    const api = await startTestApi(book);
    try {
      const key = await signInAndCreateKey(api, poster);
      const chain = await settlement(api);
      const brief = "Write a haiku about escrow.";
      const upload = await api.request("POST", "/api/v1/storage/upload", {
        key,
        body: { data: Buffer.from(brief).toString("base64") },
      });
      const taskHash = upload.json.data.rootHash;
      const amount = USDC(3);
      const build = await api.request("POST", "/api/v1/tasks", {
        key,
        body: {
          taskHash,
          token: chain.token.address,
          amount: amount.toString(),
          locationZone: "global",
          duration: "7200",
        },
      });
      expect(build.status, build.text).to.equal(200);
      await (await MockUSDC__factory.connect(chain.token.address, poster).approve(chain.escrowAddress, amount)).wait();
      const sent = await poster.sendTransaction({
        to: build.json.data.unsignedTx.to,
        data: build.json.data.unsignedTx.data,
      });
      await sent.wait();
      const indexed = await api.request("POST", "/api/v1/a2a/tasks/index", {
        key,
        body: { txHash: sent.hash, taskHash, privacy: "public", publicBrief: brief },
      });
      expect(indexed.status, indexed.text).to.equal(200);
      await pollPosted(api, key, taskHash);
      const open = await api.request("GET", "/api/v1/a2a/tasks");
      const listed = open.json.data.tasks.find((t: { meta: { taskHash: string } }) => t.meta.taskHash === taskHash);
      expect(listed.meta.privacy).to.equal("public");
      expect(listed.meta.publicBrief).to.equal(brief);
      const one = await api.request("GET", `/api/v1/tasks/${taskHash}`);
      expect(one.status).to.equal(200);
      expect(one.json.data.a2aMeta.publicBrief).to.equal(brief);
    } finally {
      await api.close();
    }
  });

  it("posts a batch: upload-batch, build one createTasks, approve the sum, send with its gas, index-batch", async () => {
    const { book, poster } = await loadFixture(deployEscrowFixture);
    const api = await startTestApi(book);
    try {
      const key = await signInAndCreateKey(api, poster);
      const chain = await settlement(api);
      expect(chain.batchCreate.supported).to.equal(true);
      const briefs = ["one", "two", "three"].map((s) => Buffer.from(`public brief ${s}`));
      const uploads = await api.request("POST", "/api/v1/storage/upload-batch", {
        key,
        body: { items: briefs.map((b) => ({ data: b.toString("base64") })) },
      });
      expect(uploads.status, uploads.text).to.equal(201);
      const hashes: string[] = uploads.json.data.results.map((r: { rootHash: string }) => r.rootHash);
      const amounts = [USDC(1), USDC(2), USDC(3)];
      const build = await api.request("POST", "/api/v1/tasks/batch", {
        key,
        body: {
          token: chain.token.address,
          tasks: hashes.map((taskHash, i) => ({
            taskHash,
            amount: amounts[i].toString(),
            locationZone: "global",
            duration: String(DAY),
          })),
        },
      });
      expect(build.status, build.text).to.equal(200);
      expect(build.json.data.taskHashes).to.deep.equal(hashes);
      const { unsignedTx } = build.json.data;
      const decoded = checkUnsignedTx(unsignedTx, {
        escrow: chain.escrowAddress,
        wallet: poster.address,
        chainId: Number((await ethers.provider.getNetwork()).chainId),
        responseChainId: build.json.data.chainId,
        fn: "createTasks",
      });
      expect(decoded.args.tasks.map((t: { taskHash: string }) => t.taskHash)).to.deep.equal(hashes);
      const total = amounts.reduce((a, b) => a + b, 0n);
      await (await MockUSDC__factory.connect(chain.token.address, poster).approve(chain.escrowAddress, total)).wait();
      const sent = await poster.sendTransaction({
        to: unsignedTx.to,
        data: unsignedTx.data,
        gasLimit: BigInt(unsignedTx.gas),
      });
      await sent.wait();
      const indexed = await api.request("POST", "/api/v1/a2a/tasks/index-batch", {
        key,
        body: { txHash: sent.hash, tasks: hashes.map((taskHash) => ({ taskHash, privacy: "public" })) },
      });
      expect(indexed.status, indexed.text).to.equal(200);
      expect(indexed.json.data.results.map((r: { indexed?: boolean }) => r.indexed)).to.deep.equal([true, true, true]);
      for (const hash of hashes) await pollPosted(api, key, hash);
      const posted = await api.request("GET", "/api/v1/a2a/tasks/posted", { key });
      expect(posted.json.data.total).to.equal(3);
    } finally {
      await api.close();
    }
  });
});
