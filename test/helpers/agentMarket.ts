/**
 * A market for agent tests, as an agent meets it: the escrow fixture, the Hardhat chain served over JSON-RPC HTTP, an
 * API with the marketplace verifier and the auto verifier, and a poster (a plain wallet with USDC and an API key).
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, USDC } from "./fixtures";
import { startTestApi } from "./api";
import { verifierPrivateKey } from "./keys";
import { freshWallet, serveChain } from "./rpc";
import { AutoVerifier } from "../../server/domain/marketplace/autoVerifier";
import { MarketApi } from "../../client/sdk/index";

export async function startAgentMarket() {
  const fixture = await loadFixture(deployEscrowFixture);
  const chain = await serveChain();
  const api = await startTestApi(fixture.book, { VERIFIER_PRIVATE_KEY: verifierPrivateKey() });
  const auto = new AutoVerifier(api.deps, { pollMs: 50 });
  auto.start();
  const poster = await freshWallet(chain.provider);
  await (await fixture.usdc.mint(poster.address, USDC(100))).wait();
  const posterApi = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(poster.address) });
  return {
    fixture,
    chain,
    api,
    poster,
    posterApi,
    async close() {
      await auto.stop();
      await api.close();
      await chain.close();
    },
  };
}

export type AgentMarket = Awaited<ReturnType<typeof startAgentMarket>>;

/** Polls `what` every `intervalMs` (100 ms by default) until it holds; after `ms`, fails naming `label`. */
export async function waitFor(
  what: () => Promise<boolean> | boolean,
  ms: number,
  label: string,
  intervalMs = 100,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
