/**
 * Every client-side code of the spec, each raised by feeding the SDK's checks a mismatching transaction, chain,
 * settlement, key or row; the flow-level ones through the posting flow against a real API and the chain served over
 * JSON-RPC HTTP. The last test asserts that every code of CLIENT_CODES was seen here or in posting.test.ts.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { JsonRpcProvider, Wallet, ZeroAddress } from "ethers";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, USDC } from "../../helpers/fixtures";
import { freePort, indexedToHead, startTestApi, type TestApi } from "../../helpers/api";
import { freshWallet, serveChain, type ServedChain } from "../../helpers/rpc";
import { TaskEscrow__factory, AgentFactory__factory } from "../../../typechain-types";
import {
  CLIENT_CODES,
  ESCROW_ABI,
  FACTORY_ABI,
  ERC20_ABI,
  MAX_ESCROW_AMOUNT,
  MarketApi,
  TxSender,
  checkAmounts,
  checkApproveTx,
  checkDeployAgentTx,
  checkEscrowTx,
  checkOwner,
  checkQuote,
  checkRpc,
  checkSendable,
  encodeApprove,
  escrowInterface,
  isMarketError,
  payDeployFee,
  pinSettlement,
  postTask,
  type MarketError,
  type Settlement,
  type SettlementPin,
  type TxAnswer,
  type ExpectedCall,
} from "../../../client/sdk/index";
import { Interface } from "ethers";
import { expectCode as expectCodeOf } from "../../helpers/marketErrors";

const seen = new Set<string>();

function expectCodeSync(fn: () => unknown, code: string): MarketError {
  try {
    fn();
  } catch (error) {
    expect(isMarketError(error), String(error)).to.equal(true);
    expect((error as MarketError).code, (error as Error).message).to.equal(code);
    seen.add(code);
    return error as MarketError;
  }
  expect.fail(`expected ${code}`);
}

/** Expects a MarketError of `code`, counted among the codes this file has seen. */
const expectCode = (promise: Promise<unknown>, code: string) => expectCodeOf(promise, code, seen);

const ESCROW = "0x" + "e5".repeat(20);
const TOKEN = "0x" + "70".repeat(20);
const POSTER = "0x" + "aa".repeat(20);
const TASK_HASH = "0x" + "ab".repeat(32);

function settlement(entry: Partial<Settlement["chains"][number]> = {}, postingChain: "base" | "arc" = "base") {
  return {
    postingChain,
    settlementTier: "local",
    chains: [
      {
        chain: "base",
        chainId: 31337,
        tier: "local",
        escrowAddress: ESCROW,
        token: { kind: "erc20", address: TOKEN, symbol: "USDC", decimals: 6 },
        relayChain: null,
        gasSymbol: "ETH",
        postable: true,
        batchCreate: { supported: true, maxBatch: 50 },
        ...entry,
      },
    ],
  } as Settlement;
}

const pin = (): SettlementPin => pinSettlement(settlement());
const task = { taskHash: TASK_HASH, amount: 5_000_000n, locationZone: "global", duration: 86_400 };

function createTaskAnswer(overrides: Partial<TxAnswer["unsignedTx"]> = {}, answer: Partial<TxAnswer> = {}): TxAnswer {
  return {
    chain: "base",
    chainId: 31337,
    ...answer,
    unsignedTx: {
      to: ESCROW,
      from: POSTER,
      value: "0",
      data: escrowInterface.encodeFunctionData("createTask", [
        TASK_HASH,
        TOKEN,
        5_000_000n,
        "general",
        "global",
        86_400,
      ]),
      ...overrides,
    },
  };
}

describe("SDK client codes: each check fed a mismatch", () => {
  describe("settlement record (pinSettlement)", () => {
    it("pins the posting chain's escrow, token and chain id", () => {
      expect(pin()).to.deep.include({ postingChain: "base", chainId: 31337, escrow: ESCROW, token: TOKEN });
    });
    it("CHAIN_UNKNOWN: no entry or no chain id for the posting chain", () => {
      expectCodeSync(() => pinSettlement(settlement({}, "arc")), "CHAIN_UNKNOWN");
      expectCodeSync(() => pinSettlement(settlement({ chainId: null })), "CHAIN_UNKNOWN");
    });
    it("SETTLEMENT_NOT_POSTABLE: not postable, or no token", () => {
      expectCodeSync(() => pinSettlement(settlement({ postable: false })), "SETTLEMENT_NOT_POSTABLE");
      expectCodeSync(() => pinSettlement(settlement({ token: null })), "SETTLEMENT_NOT_POSTABLE");
    });
    it("UNSUPPORTED_SETTLEMENT: a token kind the SDK cannot pay in", () => {
      const native = { kind: "native", address: ZeroAddress, symbol: "ETH", decimals: 18 } as never;
      expectCodeSync(() => pinSettlement(settlement({ token: native })), "UNSUPPORTED_SETTLEMENT");
    });
    it("ESCROW_NOT_PINNED: no escrow address to send to", () => {
      expectCodeSync(() => pinSettlement(settlement({ escrowAddress: null })), "ESCROW_NOT_PINNED");
    });
    it("POSTING_CHAIN_CHANGED and SETTLEMENT_CHANGED against an earlier pin or a client's fixed addresses", () => {
      const before = pin();
      expectCodeSync(() => pinSettlement(settlement({}, "arc"), before), "POSTING_CHAIN_CHANGED");
      const moved = "0x" + "e6".repeat(20);
      const error = expectCodeSync(
        () => pinSettlement(settlement({ escrowAddress: moved }), before),
        "SETTLEMENT_CHANGED",
      );
      expect(error.details).to.deep.include({ field: "escrow", actual: moved });
      expectCodeSync(() => pinSettlement(settlement(), { token: "0x" + "71".repeat(20) }), "SETTLEMENT_CHANGED");
      expectCodeSync(() => pinSettlement(settlement({ chainId: 8453 }), before), "SETTLEMENT_CHANGED");
    });
  });

  describe("the key's wallet (checkOwner)", () => {
    it("NO_WALLET: a key acting as no wallet", () => {
      expectCodeSync(() => checkOwner(undefined, POSTER), "NO_WALLET");
      expectCodeSync(() => checkOwner("", POSTER), "NO_WALLET");
    });
    it("OWNER_MISMATCH: the signer is not the key's wallet (any case)", () => {
      checkOwner(POSTER.toUpperCase().replace("0X", "0x"), POSTER);
      expectCodeSync(() => checkOwner("0x" + "bb".repeat(20), POSTER), "OWNER_MISMATCH");
    });
  });

  describe("the built transaction (checkEscrowTx)", () => {
    const expected: ExpectedCall = { fn: "createTask", token: TOKEN, ...task };
    it("passes exactly the requested createTask", () => {
      checkEscrowTx(createTaskAnswer(), pin(), POSTER, expected);
    });
    it("NOT_POSTING_CHAIN: built for another chain than the posting chain", () => {
      expectCodeSync(
        () => checkEscrowTx(createTaskAnswer({}, { chain: "arc" }), pin(), POSTER, expected),
        "NOT_POSTING_CHAIN",
      );
    });
    it("on another configured chain: checks against that chain's entry, not NOT_POSTING_CHAIN", () => {
      const ARC_ESCROW = "0x" + "e7".repeat(20);
      const ARC_TOKEN = "0x" + "72".repeat(20);
      const two = settlement();
      two.chains.push({
        ...two.chains[0],
        chain: "arc",
        chainId: 31338,
        escrowAddress: ARC_ESCROW,
        token: { kind: "erc20", address: ARC_TOKEN, symbol: "USDC", decimals: 6 },
      });
      const arcPin = pinSettlement(two, undefined, "arc");
      expect(arcPin).to.deep.include({ postingChain: "base", chain: "arc", chainId: 31338, escrow: ARC_ESCROW });
      // A re-pin against an earlier pin keeps its chain.
      expect(pinSettlement(two, arcPin)).to.deep.equal(arcPin);
      const onArc = (overrides: Partial<TxAnswer> = {}) => {
        const answer = createTaskAnswer({ to: ARC_ESCROW }, { chain: "arc", chainId: 31338, ...overrides });
        answer.unsignedTx.data = escrowInterface.encodeFunctionData("createTask", [
          TASK_HASH,
          ARC_TOKEN,
          5_000_000n,
          "general",
          "global",
          86_400,
        ]);
        return answer;
      };
      checkEscrowTx(onArc(), arcPin, POSTER, { ...expected, token: ARC_TOKEN });
      // Base's answer under arc's pin, arc's under base's pin, and base's escrow under arc's pin are refused.
      expectCodeSync(() => checkEscrowTx(createTaskAnswer(), arcPin, POSTER, expected), "CHAIN_MISMATCH");
      expectCodeSync(
        () => checkEscrowTx(onArc(), pinSettlement(two), POSTER, { ...expected, token: ARC_TOKEN }),
        "NOT_POSTING_CHAIN",
      );
      const wrongEscrow = onArc();
      wrongEscrow.unsignedTx.to = ESCROW;
      expectCodeSync(
        () => checkEscrowTx(wrongEscrow, arcPin, POSTER, { ...expected, token: ARC_TOKEN }),
        "ESCROW_MISMATCH",
      );
      // A chain the settlement record does not list: the service does not settle there.
      expectCodeSync(() => pinSettlement(settlement(), undefined, "arc"), "CHAIN_UNKNOWN");
    });
    it("CHAIN_MISMATCH: the answer's chain id differs from the settlement's", () => {
      expectCodeSync(
        () => checkEscrowTx(createTaskAnswer({}, { chainId: 1 }), pin(), POSTER, expected),
        "CHAIN_MISMATCH",
      );
    });
    it("ESCROW_MISMATCH: `to` is not the settlement's escrow", () => {
      const to = "0x" + "66".repeat(20);
      expectCodeSync(() => checkEscrowTx(createTaskAnswer({ to }), pin(), POSTER, expected), "ESCROW_MISMATCH");
    });
    it("OWNER_MISMATCH: `from` is not the signer", () => {
      const from = "0x" + "bb".repeat(20);
      expectCodeSync(() => checkEscrowTx(createTaskAnswer({ from }), pin(), POSTER, expected), "OWNER_MISMATCH");
    });
    it("TX_MISMATCH: value, another function, another argument, garbage calldata", () => {
      const check = (overrides: Partial<TxAnswer["unsignedTx"]>, want: ExpectedCall = expected) =>
        expectCodeSync(() => checkEscrowTx(createTaskAnswer(overrides), pin(), POSTER, want), "TX_MISMATCH");
      check({ value: "1" as "0" });
      check({ data: escrowInterface.encodeFunctionData("cancelTask", [1]) });
      const encode = (args: unknown[]) => escrowInterface.encodeFunctionData("createTask", args);
      check({ data: encode([TASK_HASH, TOKEN, 5_000_001n, "general", "global", 86_400]) }); // amount
      check({ data: encode(["0x" + "cd".repeat(32), TOKEN, 5_000_000n, "general", "global", 86_400]) }); // hash
      check({ data: encode([TASK_HASH, "0x" + "71".repeat(20), 5_000_000n, "general", "global", 86_400]) }); // token
      check({ data: encode([TASK_HASH, TOKEN, 5_000_000n, "general", "eu", 86_400]) }); // zone
      check({ data: encode([TASK_HASH, TOKEN, 5_000_000n, "other", "global", 86_400]) }); // category
      check({ data: encode([TASK_HASH, TOKEN, 5_000_000n, "general", "global", 3_600]) }); // duration
      check({ data: "0xdeadbeef" });
      // A verifier the client did not ask for, or none when it did.
      const verifier = "0x" + "99".repeat(20);
      const withVerifier = escrowInterface.encodeFunctionData("createTaskWithVerifier", [
        TASK_HASH,
        TOKEN,
        5_000_000n,
        "general",
        "global",
        86_400,
        verifier,
      ]);
      check({ data: withVerifier });
      check({}, { ...expected, verifierAgent: verifier });
      checkEscrowTx(createTaskAnswer({ data: withVerifier }), pin(), POSTER, { ...expected, verifierAgent: verifier });
      // A batch in another order.
      const batch = (hashes: string[]) =>
        escrowInterface.encodeFunctionData("createTasks", [
          TOKEN,
          hashes.map((h) => [h, 1n, "general", "global", 86_400, ZeroAddress]),
        ]);
      const [a, b] = ["0x" + "01".repeat(32), "0x" + "02".repeat(32)];
      const want = {
        fn: "createTasks" as const,
        token: TOKEN,
        tasks: [a, b].map((taskHash) => ({ taskHash, amount: 1n, locationZone: "global", duration: 86_400 })),
      };
      checkEscrowTx(createTaskAnswer({ data: batch([a, b]) }), pin(), POSTER, want);
      expectCodeSync(
        () => checkEscrowTx(createTaskAnswer({ data: batch([b, a]) }), pin(), POSTER, want),
        "TX_MISMATCH",
      );
      expectCodeSync(() => checkEscrowTx(createTaskAnswer({ data: batch([a]) }), pin(), POSTER, want), "TX_MISMATCH");
    });
    it("TX_MISMATCH on the approve (exactly the reward, to the escrow) and on deployAgent(0)", () => {
      const approve = (amount: bigint, spender = ESCROW) => ({
        to: TOKEN,
        from: POSTER,
        value: "0" as const,
        data: encodeApprove(spender, amount),
      });
      checkApproveTx(approve(5n), TOKEN, ESCROW, 5n, POSTER);
      expectCodeSync(() => checkApproveTx(approve(6n), TOKEN, ESCROW, 5n, POSTER), "TX_MISMATCH");
      expectCodeSync(() => checkApproveTx(approve(5n, POSTER), TOKEN, ESCROW, 5n, POSTER), "TX_MISMATCH");
      const factory = "0x" + "fa".repeat(20);
      const deploy = (arg: bigint) => ({
        to: factory,
        from: POSTER,
        value: "0" as const,
        data: new Interface(FACTORY_ABI).encodeFunctionData("deployAgent", [arg]),
      });
      checkDeployAgentTx(deploy(0n), factory, POSTER);
      expectCodeSync(() => checkDeployAgentTx(deploy(1n), factory, POSTER), "TX_MISMATCH");
    });
    it("checkSendable (market tx send): the approval first, exactly the reward its build funds; each mismatch refused", () => {
      const built = createTaskAnswer();
      const approveTx = (amount: bigint) => ({
        to: TOKEN,
        from: POSTER,
        value: "0" as const,
        data: encodeApprove(ESCROW, amount),
      });
      const sendable = { ...built, approveTx: approveTx(5_000_000n) };
      expect(checkSendable(sendable, pin(), POSTER)).to.deep.equal([sendable.approveTx, built.unsignedTx]);
      expect(checkSendable({ ...built, approveTx: null }, pin(), POSTER)).to.deep.equal([built.unsignedTx]);
      expectCodeSync(() => checkSendable({ ...built, approveTx: approveTx(5_000_001n) }, pin(), POSTER), "TX_MISMATCH");
      expectCodeSync(() => checkSendable({ ...sendable, chainId: 1 }, pin(), POSTER), "CHAIN_MISMATCH");
      expectCodeSync(
        () => checkSendable(createTaskAnswer({ to: "0x" + "0e".repeat(20) }), pin(), POSTER),
        "ESCROW_MISMATCH",
      );
      expectCodeSync(() => checkSendable(built, pin(), "0x" + "bb".repeat(20)), "OWNER_MISMATCH");
      expectCodeSync(() => checkSendable(createTaskAnswer({ value: "1" as "0" }), pin(), POSTER), "TX_MISMATCH");
      // A bare approve says nothing of the reward it is for; an approval beside a call that funds nothing neither.
      expectCodeSync(() => checkSendable({ unsignedTx: approveTx(5n) }, pin(), POSTER), "TX_MISMATCH");
      const cancel = createTaskAnswer({ data: escrowInterface.encodeFunctionData("cancelTask", [1n]) });
      expectCodeSync(() => checkSendable({ ...cancel, approveTx: approveTx(5n) }, pin(), POSTER), "TX_MISMATCH");
      expectCodeSync(() => checkSendable(createTaskAnswer({ data: "0x12345678" }), pin(), POSTER), "TX_MISMATCH");
    });
    it("the SDK's ABI has the compiled contracts' selectors (a changed signature fails here, not in a wallet)", () => {
      const compiled = TaskEscrow__factory.createInterface() as unknown as Interface;
      for (const fragment of new Interface(ESCROW_ABI).fragments) {
        if (fragment.type !== "function" && fragment.type !== "event") continue;
        const name = (fragment as unknown as { name: string }).name;
        const ours =
          fragment.type === "function" ? escrowInterface.getFunction(name)! : escrowInterface.getEvent(name)!;
        const theirs = fragment.type === "function" ? compiled.getFunction(name)! : compiled.getEvent(name)!;
        expect(ours.format("sighash"), name).to.equal(theirs.format("sighash"));
      }
      const factory = AgentFactory__factory.createInterface();
      expect(new Interface(FACTORY_ABI).getFunction("deployAgent")!.selector).to.equal(
        factory.getFunction("deployAgent").selector,
      );
      expect(new Interface(ERC20_ABI).getFunction("approve")!.selector).to.equal("0x095ea7b3");
      expect(escrowInterface.getFunction("createTask")!.selector).to.equal("0x27a825b3"); // the spec's selector
    });
  });

  describe("amounts and quotes", () => {
    it("AMOUNT_ABOVE_MAX: above the caller's cap, or above what the escrow stores (2^96 - 1)", () => {
      expect(checkAmounts([1n, 2n], 3n)).to.equal(3n);
      expectCodeSync(() => checkAmounts([2n, 2n], 3n), "AMOUNT_ABOVE_MAX");
      expectCodeSync(() => checkAmounts([MAX_ESCROW_AMOUNT + 1n]), "AMOUNT_ABOVE_MAX");
    });
    it("QUOTE_REQUIRED and QUOTE_MISMATCH: a rental must match an active service's price, agent and token", () => {
      const quote = { id: 7, price_raw: 10, agent_address: POSTER, token: TOKEN, active: true };
      const rental = { serviceId: 7, targetExecutor: POSTER, amount: 10n, token: TOKEN };
      checkQuote(quote, rental);
      expectCodeSync(() => checkQuote(undefined, rental), "QUOTE_REQUIRED");
      expectCodeSync(() => checkQuote({ ...quote, active: false }, rental), "QUOTE_REQUIRED");
      expectCodeSync(() => checkQuote(quote, { ...rental, amount: 9n }), "QUOTE_MISMATCH");
      expectCodeSync(() => checkQuote(quote, { ...rental, targetExecutor: ESCROW }), "QUOTE_MISMATCH");
      expectCodeSync(() => checkQuote({ ...quote, token: ESCROW }, rental), "QUOTE_MISMATCH");
    });
  });

  describe("against the chain served over HTTP and a real API", () => {
    let chain: ServedChain;
    let api: TestApi;
    let fixture: Awaited<ReturnType<typeof deployEscrowFixture>>;
    let poster: Wallet;
    let market: MarketApi;

    beforeEach(async () => {
      fixture = await loadFixture(deployEscrowFixture);
      chain = await serveChain();
      api = await startTestApi(fixture.book);
      await indexedToHead(api); // the settlement's postable flag is the indexed TokenAllowed
      poster = await freshWallet(chain.provider);
      market = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(poster.address) });
    });
    afterEach(async () => {
      await api.close();
      await chain.close();
    });

    const realPin = async () => pinSettlement(await market.settlement());

    it("NO_SIGNER, NO_RPC, RPC_UNREACHABLE, WRONG_CHAIN, WRONG_RPC", async () => {
      const p = await realPin();
      await checkRpc(poster, p);
      await expectCode(checkRpc(undefined, p), "NO_SIGNER");
      await expectCode(checkRpc(Wallet.createRandom(), p), "NO_RPC");
      const dead = new JsonRpcProvider(`http://127.0.0.1:${await freePort()}`);
      try {
        await expectCode(checkRpc(Wallet.createRandom().connect(dead), p, { timeoutMs: 1500 }), "RPC_UNREACHABLE");
      } finally {
        dead.destroy();
      }
      await expectCode(checkRpc(poster, { ...p, chainId: 8453 }), "WRONG_CHAIN");
      // Same chain id, but no escrow there: another network (a restarted devnet, a fork).
      await expectCode(checkRpc(poster, { ...p, escrow: Wallet.createRandom().address }), "WRONG_RPC");
      // The flow makes the same checks before anything is uploaded.
      await expectCode(postTask({ brief: "x", privacy: "public", amount: 1n }, { api: market }), "NO_SIGNER");
      await expectCode(
        postTask({ brief: "x", privacy: "public", amount: 1n }, { api: market, signer: Wallet.createRandom() }),
        "NO_RPC",
      );
    });

    it("OWNER_MISMATCH: a key of another wallet; OWNER_UNCHECKED: the key's wallet cannot be read", async () => {
      const other = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(fixture.stranger.address) });
      await expectCode(
        postTask({ brief: "x", privacy: "public", amount: 1n }, { api: other, signer: poster }),
        "OWNER_MISMATCH",
      );
      const broken = new MarketApi({
        baseUrl: api.url,
        apiKey: "sk_" + "00".repeat(32),
        fetch: async (input, init) =>
          String(input).endsWith("/whoami") ? new Response("upstream down", { status: 502 }) : fetch(input, init),
      });
      await expectCode(
        postTask({ brief: "x", privacy: "public", amount: 1n }, { api: broken, signer: poster }),
        "OWNER_UNCHECKED",
      );
    });

    it("SETTLEMENT_CHANGED: a client built against another escrow refuses to post", async () => {
      await (await fixture.usdc.mint(poster.address, USDC(5))).wait();
      await expectCode(
        postTask(
          { brief: "x", privacy: "public", amount: 1n },
          { api: market, signer: poster, expect: { escrow: Wallet.createRandom().address } },
        ),
        "SETTLEMENT_CHANGED",
      );
    });

    it("INSUFFICIENT_BALANCE and AMOUNT_ABOVE_MAX before anything is uploaded", async () => {
      await expectCode(
        postTask({ brief: "no money", privacy: "public", amount: USDC(1) }, { api: market, signer: poster }),
        "INSUFFICIENT_BALANCE",
      );
      await (await fixture.usdc.mint(poster.address, USDC(100))).wait();
      await expectCode(
        postTask(
          { brief: "over cap", privacy: "public", amount: USDC(50) },
          { api: market, signer: poster, maxAmount: USDC(20) },
        ),
        "AMOUNT_ABOVE_MAX",
      );
      expect(await api.testDb.db("blobs").count({ n: "*" }).first()).to.deep.include({ n: 0 });
    });

    it("NO_EXECUTORS: a private brief nobody registered could read; QUOTE_REQUIRED for an unknown service", async () => {
      await (await fixture.usdc.mint(poster.address, USDC(100))).wait();
      await expectCode(
        postTask(
          { brief: "secret", amount: USDC(1), requiredCapabilities: ["nobody-has-this"] },
          { api: market, signer: poster },
        ),
        "NO_EXECUTORS",
      );
      await expectCode(
        postTask(
          {
            brief: "rent",
            privacy: "public",
            amount: USDC(1),
            targetExecutor: fixture.worker.address,
            serviceId: 4242,
          },
          { api: market, signer: poster },
        ),
        "QUOTE_REQUIRED",
      );
    });

    it("UNCONFIRMED: no receipt within the confirm timeout", async () => {
      const sender = new TxSender(poster, { confirmTimeoutMs: 700 });
      const error = await expectCode(sender.wait("0x" + "12".repeat(32)), "UNCONFIRMED");
      expect(error.details).to.deep.include({ txHash: "0x" + "12".repeat(32) });
    });

    it("DEPLOY_FEE_ABOVE_MAX: a fee above the cap (default 1 USDC) is refused; at the cap it is paid and credited", async () => {
      const agent = await freshWallet(chain.provider);
      const agentApi = new MarketApi({ baseUrl: api.url, apiKey: await api.createKey(agent.address) });
      await (await fixture.usdc.mint(agent.address, USDC(5))).wait();
      await expectCode(payDeployFee({ api: agentApi, signer: agent, maxFee: USDC(1) - 1n }), "DEPLOY_FEE_ABOVE_MAX");
      const paid = await payDeployFee({ api: agentApi, signer: agent });
      expect(paid).to.deep.include({ required: true, credits: 1, amount_raw: USDC(1).toString() });
      await (await fixture.agentFactory.connect(fixture.admin).setDeployFee(USDC(2))).wait();
      await expectCode(payDeployFee({ api: agentApi, signer: agent }), "DEPLOY_FEE_ABOVE_MAX");
    });

    it("API_UNREACHABLE: the API does not answer", async () => {
      const gone = new MarketApi({ baseUrl: `http://127.0.0.1:${await freePort()}` });
      await expectCode(gone.stats(), "API_UNREACHABLE");
    });
  });

  describe("coverage", () => {
    it("every client code of the spec is raised by a test (here or in posting.test.ts)", () => {
      const inPostingTests = ["TX_MAYBE_SENT", "INVALID_ROWS"];
      const missing = CLIENT_CODES.filter((c) => !seen.has(c) && !inPostingTests.includes(c));
      expect(missing).to.deep.equal([]);
    });
  });
});

void ethers;
