/**
 * Post a task with plain ethers and the REST API, no SDK: upload, build, send the answer's approveTx and unsignedTx
 * back to back, list.
 *
 * The provider setup is the point. An ethers v6 `JsonRpcProvider` caches identical reads for 250 ms, and a
 * `Wallet` asks the provider for its nonce (`eth_getTransactionCount(address, "pending")`) on every send: on an
 * automining chain (the devnet) the second of two sends within 250 ms gets the first's cached nonce and fails
 * `NONCE_EXPIRED` ("nonce has already been used"). `cacheTimeout: -1` turns the cache off, so each send reads the
 * nonce from the node. (Giving each transaction an explicit `nonce` works too; the SDK counts nonces itself.)
 *
 *     node -r ts-node/register/transpile-only examples/plainEthers.ts   (environment: see examples/env.ts)
 */
import { JsonRpcProvider, Wallet } from "ethers";

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name} (see examples/env.ts)`);
  return value;
};

async function rest(path: string, body: unknown) {
  const response = await fetch(`${env("MARKET_API_URL")}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": env("MARKET_API_KEY") },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (!answer.success) throw new Error(`${path}: ${answer.error.code}: ${answer.error.message}`);
  return answer.data;
}

async function main() {
  // The working setup for the devnet: no read cache.
  const provider = new JsonRpcProvider(env("MARKET_RPC_URL"), undefined, { cacheTimeout: -1 });
  const wallet = new Wallet(env("MARKET_PRIVATE_KEY"), provider);

  const brief = `Summarise: plain ethers posts a task. (${new Date().toISOString()})`;
  const { rootHash } = await rest("/api/v1/storage/upload", { data: Buffer.from(brief).toString("base64") });
  const built = await rest("/api/v1/tasks", {
    taskHash: rootHash,
    amount: "1500000", // 1.5 USDC in the token's smallest units (6 decimals)
    locationZone: "global",
    duration: 3600, // seconds
    verificationMode: "auto",
    verificationCriteria: { required_fields: ["summary"] },
    requiredCapabilities: ["summarise"],
  });
  // A real client checks both transactions first (docs/api.md: the checks a careful client makes).
  for (const tx of [built.approveTx, built.unsignedTx]) {
    if (!tx) continue; // approveTx is null when the allowance already covers the reward
    const sent = await wallet.sendTransaction({ to: tx.to, data: tx.data, gasLimit: tx.gas });
    const receipt = await sent.wait();
    console.log(`  sent ${sent.hash} (nonce ${sent.nonce}), status ${receipt?.status}`);
    if (tx === built.unsignedTx) {
      const listed = await rest("/api/v1/a2a/tasks/index", {
        txHash: sent.hash,
        taskHash: rootHash,
        privacy: "public",
        publicBrief: brief,
      });
      console.log(`listed ${rootHash}: task #${listed.onChainTaskId ?? listed.tasks?.[0]?.onChainTaskId}`);
    }
  }
  provider.destroy();
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error("FAILED", error);
    process.exit(1);
  },
);
