/**
 * Readiness and metrics of a service settling on two chains (docs/operations.md, "Health" and "Metrics"), over
 * HTTP: /health/ready checks each configured chain's RPC and index (`chains.base`, `chains.arc`; `checks.chain` and
 * `checks.indexer` merged), names the chain that fails, and /metrics carries each chain's indexer series and
 * verifier intents under a `chain` label.
 */
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { JsonRpcProvider } from "ethers";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, CATEGORY, DAY, USDC, ZONE } from "../../helpers/fixtures";
import { arcFixture, type ArcFixture } from "../../helpers/arc";
import { startTestApi, type TestApi } from "../../helpers/api";
import { verifierPrivateKey } from "../../helpers/keys";
import { scrape } from "../../helpers/prometheus";
import { createApp } from "../../../server/api/app";
import { createHttpServer } from "../../../server/api/httpServer";
import { verifierOn } from "../../../server/domain/verifiers";
import { assignKey } from "../../../server/verifier/types";
import type { Deps } from "../../../server/domain/deps";

/** An API over `deps` on an ephemeral port; GET `path`. */
async function getWith(deps: Deps, path: string) {
  const server = createHttpServer(createApp(deps).callback(), deps.config.api.timeouts);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
    return { status: response.status, json: await response.json() };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

async function withTwoChains(
  env: Record<string, string>,
  fn: (api: TestApi, arc: ArcFixture) => Promise<void>,
): Promise<void> {
  const fx = await loadFixture(deployEscrowFixture);
  const arc = await arcFixture();
  const api = await startTestApi(fx.book, env, { arc: { book: arc.book, provider: arc.provider } });
  try {
    await api.synced();
    await fn(api, arc);
  } finally {
    await api.close();
  }
}

describe("Health and metrics per chain", function () {
  this.timeout(120_000);

  it("is ready with each chain's RPC and index checked, and names the chain whose index falls behind", () =>
    withTwoChains({ READY_MAX_INDEXER_LAG: "2" }, async (api, arc) => {
      const ready = await api.request("GET", "/health/ready");
      expect(ready.status, ready.text).to.equal(200);
      const { checks, chains } = ready.json.data;
      for (const chain of ["base", "arc"]) {
        expect(chains[chain].chain.ok, chain).to.equal(true);
        expect(chains[chain].chain.detail, chain).to.match(/^\d+$/);
        expect(chains[chain].indexer.detail, chain).to.match(/^\d+ blocks behind the head$/);
      }
      expect(Number(chains.arc.chain.detail)).to.equal(await arc.provider.getBlockNumber());
      expect(checks.indexer.detail).to.match(/^base: \d+ blocks behind the head; arc: \d+ blocks behind the head$/);

      await api.arcIndexer!.stop();
      await arc.runtime.network.provider.send("hardhat_mine", ["0x5"]);
      const behind = await api.request("GET", "/health/ready");

      expect(behind.status, behind.text).to.equal(503);
      expect(behind.json.error.code).to.equal("NOT_READY");
      expect(behind.json.error.details.failing).to.deep.equal(["indexer"]);
      expect(behind.json.error.details.chains.base.indexer.ok).to.equal(true);
      expect(behind.json.error.details.chains.arc.indexer.ok).to.equal(false);
      expect(behind.json.error.message).to.match(
        /^not ready: indexer \(arc: \d+ blocks behind the head \(\d+\); at most 2/,
      );
    }));

  it("names the chain whose RPC does not answer, the other chain's checks passing", () =>
    withTwoChains({ READY_TIMEOUT_MS: "1000" }, async (api) => {
      const dead = new JsonRpcProvider("http://127.0.0.1:1", undefined, { staticNetwork: true });
      try {
        const chains = new Map(api.deps.chains);
        chains.set("arc", { ...api.deps.chains.get("arc")!, provider: dead });
        const res = await getWith({ ...api.deps, chains }, "/health/ready");
        expect(res.status).to.equal(503);
        expect(res.json.error.details.failing).to.deep.equal(["chain", "indexer"]);
        const perChain = res.json.error.details.chains;
        expect(perChain.base.chain.ok).to.equal(true);
        expect(perChain.base.indexer.ok).to.equal(true);
        expect(perChain.arc.chain.ok).to.equal(false);
        expect(perChain.arc.indexer.detail).to.equal("cannot be checked without the chain");
        expect(res.json.error.details.checks.chain.detail).to.match(/^arc: /);
      } finally {
        dead.destroy();
      }
    }));

  it("labels each chain's indexer series and verifier intents with the chain", () =>
    withTwoChains({ METRICS: "on", VERIFIER_PRIVATE_KEY: verifierPrivateKey() }, async (api, arc) => {
      const token = await arc.usdc.getAddress();
      const id = Number(await arc.escrow.nextTaskId());
      await (
        await arc.escrow.connect(arc.poster).createTask(`0x${"a".repeat(64)}`, token, USDC(5), CATEGORY, ZONE, DAY)
      ).wait();
      const verifier = verifierOn(api.deps, "arc")!;
      await verifier.requestAssign(id, arc.worker.address);
      expect((await verifier.settled(assignKey(id))).status).to.equal("confirmed");
      await api.synced();

      const s = await scrape(`${api.url}/metrics`);

      const arcLabels = { chain: "arc", network: "hardhat-arc" };
      const arcCheckpoint = s.value("market_indexer_checkpoint_block", arcLabels);
      expect(arcCheckpoint).to.be.at.most(api.arcIndexer!.status().checkpoint!);
      expect(arcCheckpoint).to.be.at.least((await arc.provider.getBlockNumber()) - 5);
      expect(s.value("market_indexer_lag_blocks", arcLabels)).to.equal(
        s.value("market_indexer_head_block", arcLabels) - arcCheckpoint,
      );
      expect(s.has("market_indexer_checkpoint_block", { chain: "base", network: "hardhat" })).to.equal(true);
      expect(s.value("market_verifier_intents", { chain: "arc", state: "confirmed" })).to.equal(1);
      expect(s.value("market_verifier_intents", { chain: "base", state: "confirmed" })).to.equal(0);
      expect(s.value("market_verifier_intents", { chain: "base", state: "failed" })).to.equal(0);
    }));
});
