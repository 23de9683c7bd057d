/**
 * The settlement record (GET /api/v1/health/settlement) lists every configured chain, the posting chain first, each
 * read from its own deployment: a chain without an address book is listed, not postable.
 */
import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi } from "../../helpers/api";
import { ARC_CHAIN_ID, arcFixture } from "../../helpers/arc";

describe("settlement record: every configured chain", () => {
  it("lists the posting chain alone by default, and each chain of CHAINS with its own deployment", async () => {
    const { book } = await loadFixture(deployEscrowFixture);
    const single = await startTestApi(book);
    try {
      await single.synced();
      const json = (await single.request("GET", "/api/v1/health/settlement")).json.data;
      expect(json.postingChain).to.equal("base");
      expect(json.chains.map((c: { chain: string }) => c.chain)).to.deep.equal(["base"]);
      expect(json.chains[0]).to.include({ chainId: book.chainId, escrowAddress: book.escrow.proxy, postable: true });
    } finally {
      await single.close();
    }
    // arc configured, its address book missing: listed, not postable.
    const two = await startTestApi(book, { CHAINS: "base,arc", ARC_NETWORK: "hardhat-arc", ARC_GAS_SYMBOL: "USDC" });
    try {
      await two.synced();
      const json = (await two.request("GET", "/api/v1/health/settlement")).json.data;
      expect(json.chains.map((c: { chain: string }) => c.chain)).to.deep.equal(["base", "arc"]);
      expect(json.chains[0]).to.include({ chainId: book.chainId, postable: true });
      expect(json.chains[1]).to.deep.include({
        chain: "arc",
        chainId: null,
        escrowAddress: null,
        token: null,
        gasSymbol: "USDC",
        postable: false,
        batchCreate: { supported: false, maxBatch: 0 },
      });
    } finally {
      await two.close();
    }
  });

  it("reads arc's entry from arc's own deployment (a second chain with its own id, escrow and token)", async () => {
    const { book } = await loadFixture(deployEscrowFixture);
    const arc = await arcFixture();
    const api = await startTestApi(book, {}, { arc });
    try {
      await api.synced();
      const json = (await api.request("GET", "/api/v1/health/settlement")).json.data;
      expect(json.chains.map((c: { chain: string }) => c.chain)).to.deep.equal(["base", "arc"]);
      expect(arc.book.escrow.proxy).to.not.equal(book.escrow.proxy);
      expect(json.chains[1]).to.deep.include({
        chain: "arc",
        chainId: ARC_CHAIN_ID,
        escrowAddress: arc.book.escrow.proxy,
        batchCreate: { supported: true, maxBatch: json.chains[0].batchCreate.maxBatch },
      });
      expect(json.chains[1].token.address).to.equal(arc.book.token.address);
      expect(api.arcIndexer!.status().state).to.equal("following");
    } finally {
      await api.close();
    }
  });
});
