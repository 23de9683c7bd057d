/**
 * The careful client's checks (spec, Authentication 9), each raising the spec's client code. They run before
 * anything is signed: the wallet is the key's wallet, `to` is the escrow of the settlement record for the posting
 * chain, the chain id matches (the answer's, the settlement's and the RPC's), the decoded call is exactly the
 * requested function with exactly the requested arguments and zero value, and the approval is exactly the reward.
 */
import { Contract, type Provider, type Signer } from "ethers";
import { ClientError, refuse } from "./errors";
import { MAX_ESCROW_AMOUNT, TASK_CATEGORY, erc20Interface, escrowInterface, factoryInterface } from "./abi";
import type { ChainName, Settlement, UnsignedTx } from "./types";

/** What a client pins from the settlement record before posting, and re-checks before signing. */
export interface SettlementPin {
  postingChain: ChainName;
  /** The chain this pin is for (its escrow, token and chain id): the posting chain unless another was named. */
  chain: ChainName;
  chainId: number;
  escrow: string;
  token: string;
  symbol: string;
  decimals: number;
  batch: { supported: boolean; maxBatch: number };
}

const lc = (v: string) => v.toLowerCase();

/** The chain of `pin` (a pin saved before pins named their chain is the posting chain's). */
export const pinnedChain = (pin: Pick<SettlementPin, "postingChain"> & { chain?: ChainName }): ChainName =>
  pin.chain ?? pin.postingChain;

/**
 * The settlement record's entry of `chain` as a pin: the chain `expected` pinned, else the posting chain. With
 * `expected` (an earlier pin, or the addresses a client was built against), a different posting chain is
 * POSTING_CHAIN_CHANGED and a different chain id, escrow or token SETTLEMENT_CHANGED. A chain the record does not
 * list (the service does not settle there) is CHAIN_UNKNOWN.
 */
export function pinSettlement(
  settlement: Settlement,
  expected?: Partial<SettlementPin>,
  chain: ChainName = expected?.chain ?? settlement.postingChain,
): SettlementPin {
  if (expected?.postingChain !== undefined && expected.postingChain !== settlement.postingChain) {
    refuse(
      "POSTING_CHAIN_CHANGED",
      `the posting chain is now ${settlement.postingChain}, not ${expected.postingChain}`,
      {
        details: { expected: expected.postingChain, actual: settlement.postingChain },
      },
    );
  }
  const entry = settlement.chains.find((c) => c.chain === chain);
  if (!entry || entry.chainId === null) {
    const which = chain === settlement.postingChain ? `the posting chain ${chain}` : `chain ${chain}`;
    refuse("CHAIN_UNKNOWN", `the settlement record names no chain id for ${which}`);
  }
  if (!entry.postable) refuse("SETTLEMENT_NOT_POSTABLE", `chain ${entry.chain} is not postable now`);
  if (!entry.token) refuse("SETTLEMENT_NOT_POSTABLE", `chain ${entry.chain} has no settlement token`);
  if (entry.token.kind !== "erc20") {
    refuse("UNSUPPORTED_SETTLEMENT", `settlement token kind ${String(entry.token.kind)} is not supported`);
  }
  if (!entry.escrowAddress) {
    refuse("ESCROW_NOT_PINNED", `the settlement record names no escrow for ${entry.chain}: nothing to send to`);
  }
  const pin: SettlementPin = {
    postingChain: settlement.postingChain,
    chain,
    chainId: entry.chainId,
    escrow: lc(entry.escrowAddress),
    token: lc(entry.token.address),
    symbol: entry.token.symbol,
    decimals: entry.token.decimals,
    batch: entry.batchCreate,
  };
  for (const field of ["chainId", "escrow", "token"] as const) {
    const want = expected?.[field];
    if (want !== undefined && String(want).toLowerCase() !== String(pin[field]).toLowerCase()) {
      refuse("SETTLEMENT_CHANGED", `the settlement ${field} is now ${pin[field]}, not ${want}: refusing to post`, {
        details: { field, expected: want, actual: pin[field] },
      });
    }
  }
  return pin;
}

/** The key must act as a wallet (NO_WALLET), and that wallet must be the signer's (OWNER_MISMATCH). */
export function checkOwner(keyWallet: string | null | undefined, signerAddress: string): void {
  if (!keyWallet) refuse("NO_WALLET", "the API key acts as no wallet: funding needs a wallet-bound key");
  if (lc(keyWallet) !== lc(signerAddress)) {
    refuse("OWNER_MISMATCH", `the API key acts as ${lc(keyWallet)}, the signer is ${lc(signerAddress)}`, {
      details: { keyWallet: lc(keyWallet), signer: lc(signerAddress) },
    });
  }
}

/** One task of a createTask / createTaskWithVerifier / createTasks call, as requested. */
export interface ExpectedTask {
  taskHash: string;
  amount: bigint;
  locationZone: string;
  duration: number;
  verifierAgent?: string;
}

/** The escrow call a client asked for; the built transaction must be exactly this. */
export type ExpectedCall =
  | ({ fn: "createTask"; token: string } & ExpectedTask)
  | { fn: "createTasks"; token: string; tasks: ExpectedTask[] }
  | { fn: "submitEvidence"; taskId: bigint; evidenceHash: string }
  | { fn: "assignWorker"; taskId: bigint; worker: string }
  | { fn: "resolveDispute"; taskId: bigint; workerFavored: boolean }
  | { fn: "completeVerification"; taskId: bigint; passed: boolean }
  | {
      fn: "cancelTask" | "claimTimeout" | "raiseDispute" | "releaseUnjudgedWork" | "escalateUnjudgedWork";
      taskId: bigint;
    };

/** An API answer carrying an unsigned escrow transaction. */
export interface TxAnswer {
  unsignedTx: UnsignedTx;
  chain: ChainName;
  chainId: number;
}

/**
 * Checks an unsigned escrow transaction before signing: NOT_POSTING_CHAIN (another chain than the posting chain a
 * pin of the posting chain expects), CHAIN_MISMATCH (another chain than a pin of another chain expects, or another
 * chain id), ESCROW_MISMATCH, OWNER_MISMATCH, TX_MISMATCH (function, arguments or value).
 */
export function checkEscrowTx(answer: TxAnswer, pin: SettlementPin, signerAddress: string, expected: ExpectedCall) {
  const pinned = pinnedChain(pin);
  if (answer.chain !== pinned) {
    if (pinned === pin.postingChain) {
      refuse("NOT_POSTING_CHAIN", `the transaction is for ${answer.chain}, the posting chain is ${pin.postingChain}`);
    }
    refuse("CHAIN_MISMATCH", `the transaction is for ${answer.chain}, the pinned chain is ${pinned}`, {
      details: { expected: pinned, actual: answer.chain },
    });
  }
  if (answer.chainId !== pin.chainId) {
    refuse("CHAIN_MISMATCH", `the transaction names chain id ${answer.chainId}, the settlement ${pin.chainId}`, {
      details: { expected: pin.chainId, actual: answer.chainId },
    });
  }
  const tx = answer.unsignedTx;
  if (lc(tx.to) !== pin.escrow) {
    refuse("ESCROW_MISMATCH", `the transaction goes to ${lc(tx.to)}, the escrow is ${pin.escrow}`, {
      details: { expected: pin.escrow, actual: lc(tx.to) },
    });
  }
  if (lc(tx.from) !== lc(signerAddress)) {
    refuse("OWNER_MISMATCH", `the transaction is from ${lc(tx.from)}, the signer is ${lc(signerAddress)}`);
  }
  if (BigInt(tx.value ?? "0") !== 0n) refuse("TX_MISMATCH", `the transaction sends value ${tx.value}; expected 0`);
  const mismatch = callMismatch(tx.data, expected);
  if (mismatch) refuse("TX_MISMATCH", `the transaction is not the requested ${expected.fn}: ${mismatch}`);
}

/** Why `data` is not exactly `expected`, or undefined when it is. */
export function callMismatch(data: string, expected: ExpectedCall): string | undefined {
  let call;
  try {
    call = escrowInterface.parseTransaction({ data });
  } catch {
    call = null;
  }
  if (!call) return "calldata does not decode as an escrow function";
  const wantFn =
    expected.fn === "createTask" && expected.verifierAgent ? "createTaskWithVerifier" : (expected.fn as string);
  if (call.name !== wantFn) return `it calls ${call.name}, expected ${wantFn}`;
  const a = call.args;
  const diff = (what: string, got: unknown, want: unknown) =>
    norm(got) === norm(want) ? undefined : `${what} is ${norm(got)}, expected ${norm(want)}`;
  const taskDiff = (prefix: string, got: readonly unknown[], want: ExpectedTask, withToken?: string) =>
    (withToken !== undefined ? diff(`${prefix}token`, got[1], withToken) : undefined) ??
    diff(`${prefix}taskHash`, got[0], want.taskHash) ??
    diff(`${prefix}amount`, withToken !== undefined ? got[2] : got[1], want.amount) ??
    diff(`${prefix}category`, withToken !== undefined ? got[3] : got[2], TASK_CATEGORY) ??
    diff(`${prefix}locationZone`, withToken !== undefined ? got[4] : got[3], want.locationZone) ??
    diff(`${prefix}duration`, withToken !== undefined ? got[5] : got[4], BigInt(want.duration)) ??
    (withToken !== undefined
      ? want.verifierAgent
        ? diff(`${prefix}verifierAgent`, got[6], want.verifierAgent)
        : undefined
      : diff(`${prefix}verifierAgent`, got[5], want.verifierAgent ?? ZERO_ADDRESS));
  switch (expected.fn) {
    case "createTask":
      return taskDiff("", a, expected, expected.token);
    case "createTasks": {
      const tasks = a[1] as readonly (readonly unknown[])[];
      const token = diff("token", a[0], expected.token);
      if (token) return token;
      if (tasks.length !== expected.tasks.length)
        return `it funds ${tasks.length} tasks, expected ${expected.tasks.length}`;
      for (let i = 0; i < tasks.length; i++) {
        const d = taskDiff(`tasks[${i}].`, tasks[i], expected.tasks[i]);
        if (d) return d;
      }
      return undefined;
    }
    case "submitEvidence":
      return diff("taskId", a[0], expected.taskId) ?? diff("evidenceHash", a[1], expected.evidenceHash);
    case "assignWorker":
      return diff("taskId", a[0], expected.taskId) ?? diff("worker", a[1], expected.worker);
    case "resolveDispute":
      return diff("taskId", a[0], expected.taskId) ?? diff("workerFavored", a[1], expected.workerFavored);
    case "completeVerification":
      return diff("taskId", a[0], expected.taskId) ?? diff("passed", a[1], expected.passed);
    default:
      return diff("taskId", a[0], expected.taskId);
  }
}

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

function norm(v: unknown): string {
  if (typeof v === "bigint" || typeof v === "number") return BigInt(v).toString();
  return String(v).toLowerCase();
}

/**
 * The signer can sign (NO_SIGNER), has an RPC (NO_RPC) that answers (RPC_UNREACHABLE), on the expected chain
 * (WRONG_CHAIN), where the escrow has code (WRONG_RPC: another network with the same chain id, e.g. a restarted
 * devnet). Answers the provider.
 */
export async function checkRpc(
  signer: Signer | undefined,
  pin: Pick<SettlementPin, "chainId" | "escrow">,
  options: { timeoutMs?: number } = {},
) {
  if (!signer) refuse("NO_SIGNER", "no signer: posting signs transactions with the key's wallet");
  const provider = signer.provider;
  if (!provider) refuse("NO_RPC", "the signer has no provider: connect it to an RPC of the posting chain");
  let chainId: bigint;
  let code: string;
  const timeoutMs = options.timeoutMs ?? 15_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    // A JsonRpcProvider whose node is down retries its network detection forever: bound it.
    [chainId, code] = await Promise.race([
      (async () => [(await provider.getNetwork()).chainId, await provider.getCode(pin.escrow)] as const)(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    throw new ClientError("RPC_UNREACHABLE", `the RPC did not answer: ${(error as Error).message}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
  if (chainId !== BigInt(pin.chainId)) {
    refuse("WRONG_CHAIN", `the RPC is on chain ${chainId}, the posting chain is ${pin.chainId}`, {
      details: { expected: pin.chainId, actual: Number(chainId) },
    });
  }
  if (code === "0x") {
    refuse("WRONG_RPC", `the RPC has no contract at the escrow ${pin.escrow}: it serves another network`);
  }
  return provider;
}

/** Every reward is above 0 and storable by the escrow, and the total at most the caller's cap (AMOUNT_ABOVE_MAX). */
export function checkAmounts(amounts: readonly bigint[], maxTotal?: bigint): bigint {
  const total = amounts.reduce((s, a) => s + a, 0n);
  const tooLarge = amounts.findIndex((a) => a > MAX_ESCROW_AMOUNT);
  if (tooLarge >= 0) {
    refuse("AMOUNT_ABOVE_MAX", `amount ${amounts[tooLarge]} is above the escrow's maximum ${MAX_ESCROW_AMOUNT}`);
  }
  if (maxTotal !== undefined && total > maxTotal) {
    refuse("AMOUNT_ABOVE_MAX", `the reward ${total} is above the cap ${maxTotal}`, {
      details: { amount: total.toString(), max: maxTotal.toString() },
    });
  }
  return total;
}

/** The wallet holds at least `needed` of the token (INSUFFICIENT_BALANCE). */
export async function checkBalance(provider: Provider, token: string, owner: string, needed: bigint) {
  let balance: bigint;
  try {
    balance = await new Contract(token, erc20Interface, provider).balanceOf(owner);
  } catch (error) {
    throw new ClientError("RPC_UNREACHABLE", `could not read the token balance: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (balance < needed) {
    refuse("INSUFFICIENT_BALANCE", `the wallet holds ${balance} of the token, the reward is ${needed}`, {
      details: { balance: balance.toString(), needed: needed.toString() },
    });
  }
  return balance;
}

/** The token allowance `owner` gives `spender`, read from the chain (RPC_UNREACHABLE when it cannot be read). */
export async function readAllowance(
  provider: Provider,
  token: string,
  owner: string,
  spender: string,
): Promise<bigint> {
  try {
    return await new Contract(token, erc20Interface, provider).allowance(owner, spender);
  } catch (error) {
    throw new ClientError("RPC_UNREACHABLE", `could not read the token allowance: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** The calldata of `approve(spender, amount)`. */
export function encodeApprove(spender: string, amount: bigint): string {
  return erc20Interface.encodeFunctionData("approve", [spender, amount]);
}

/** An unsigned approve must be to the token, from the signer, for exactly `amount` to `spender` (TX_MISMATCH). */
export function checkApproveTx(tx: UnsignedTx, token: string, spender: string, amount: bigint, signer: string) {
  if (lc(tx.to) !== lc(token)) refuse("TX_MISMATCH", `the approve goes to ${tx.to}, not the token ${token}`);
  if (lc(tx.from) !== lc(signer)) refuse("OWNER_MISMATCH", `the approve is from ${tx.from}, the signer is ${signer}`);
  if (BigInt(tx.value ?? "0") !== 0n) refuse("TX_MISMATCH", "the approve sends value");
  let call;
  try {
    call = erc20Interface.parseTransaction({ data: tx.data });
  } catch {
    call = null;
  }
  if (call?.name !== "approve" || lc(call.args[0]) !== lc(spender) || call.args[1] !== amount) {
    refuse("TX_MISMATCH", `the transaction is not approve(${spender}, ${amount})`);
  }
}

/** A service a task rents (its quote): the price and agent the rental must match, before anything is paid. */
export interface ServiceQuote {
  id: number;
  price_raw: number;
  agent_address: string;
  token: string;
  active: boolean;
}

/**
 * A rental pays at least the service's price, in the settlement token, to the agent selling it: QUOTE_REQUIRED when
 * there is no active quote, QUOTE_MISMATCH when the task does not match it. The service checks the same when listing
 * (SERVICE_*, UNDERPAID), but only after the reward is in escrow.
 */
export function checkQuote(
  quote: ServiceQuote | undefined,
  rental: { serviceId: number; targetExecutor: string; amount: bigint; token: string },
) {
  if (!quote || !quote.active) {
    refuse("QUOTE_REQUIRED", `service ${rental.serviceId} has no active quote: it cannot be rented`);
  }
  const mismatch =
    lc(quote.agent_address) !== lc(rental.targetExecutor)
      ? `it is sold by ${lc(quote.agent_address)}, not ${lc(rental.targetExecutor)}`
      : lc(quote.token) !== lc(rental.token)
        ? `it is priced in ${lc(quote.token)}, not the settlement token ${lc(rental.token)}`
        : rental.amount < BigInt(quote.price_raw)
          ? `its price is ${quote.price_raw}, the reward ${rental.amount}`
          : undefined;
  if (mismatch) {
    refuse("QUOTE_MISMATCH", `the rental does not match service ${rental.serviceId}: ${mismatch}`, {
      details: { serviceId: rental.serviceId, price_raw: quote.price_raw, agent: lc(quote.agent_address) },
    });
  }
}

/** An unsigned deployAgent must be deployAgent(0) to the factory from the signer (TX_MISMATCH). */
export function checkDeployAgentTx(tx: UnsignedTx, factory: string, signer: string) {
  if (lc(tx.to) !== lc(factory)) refuse("TX_MISMATCH", `deployAgent goes to ${tx.to}, not the factory ${factory}`);
  if (lc(tx.from) !== lc(signer)) refuse("OWNER_MISMATCH", `deployAgent is from ${tx.from}, the signer is ${signer}`);
  if (BigInt(tx.value ?? "0") !== 0n) refuse("TX_MISMATCH", "deployAgent sends value");
  let call;
  try {
    call = factoryInterface.parseTransaction({ data: tx.data });
  } catch {
    call = null;
  }
  if (call?.name !== "deployAgent" || call.args[0] !== 0n)
    refuse("TX_MISMATCH", "the transaction is not deployAgent(0)");
}

/** A transaction the service answered, as `market tx send` reads it: bare, or an answer carrying it. */
export interface SendableAnswer {
  unsignedTx: UnsignedTx;
  /** The approval a task or batch build answers (null when the allowance already covers the reward). */
  approveTx?: UnsignedTx | null;
  /** The chain the answer names (a task's transaction is for the task's chain). */
  chain?: ChainName;
  chainId?: number;
}

/** The reward a createTask / createTaskWithVerifier / createTasks call moves, or undefined for another call. */
export function fundedAmount(data: string): bigint | undefined {
  let call;
  try {
    call = escrowInterface.parseTransaction({ data });
  } catch {
    return undefined;
  }
  if (call?.name === "createTask" || call?.name === "createTaskWithVerifier") return BigInt(call.args[2]);
  if (call?.name === "createTasks") {
    return (call.args[1] as readonly (readonly unknown[])[]).reduce((sum, t) => sum + BigInt(t[1] as bigint), 0n);
  }
  return undefined;
}

/**
 * The checks of an unsigned transaction handed over as it is (the service's answer, saved or piped), with no request
 * of the client's to compare against: the chain id is the pinned one (CHAIN_MISMATCH), the call goes to the pinned
 * escrow (ESCROW_MISMATCH) and decodes as one of its functions (TX_MISMATCH), from the signer (OWNER_MISMATCH) with
 * zero value; an approval is on the pinned token, for the escrow, for exactly the reward its build funds. Answers
 * the transactions in the order they are to be sent (the approval first).
 */
export function checkSendable(answer: SendableAnswer, pin: SettlementPin, signerAddress: string): UnsignedTx[] {
  if (answer.chainId !== undefined && answer.chainId !== pin.chainId) {
    refuse("CHAIN_MISMATCH", `the transaction names chain id ${answer.chainId}, the settlement ${pin.chainId}`, {
      details: { expected: pin.chainId, actual: answer.chainId },
    });
  }
  const tx = answer.unsignedTx;
  if (lc(tx.to) === pin.token) {
    refuse(
      "TX_MISMATCH",
      "a bare token transaction cannot be checked against a reward: send the whole build answer (unsignedTx with its approveTx)",
    );
  }
  if (lc(tx.to) !== pin.escrow) {
    refuse("ESCROW_MISMATCH", `the transaction goes to ${lc(tx.to)}, the escrow is ${pin.escrow}`, {
      details: { expected: pin.escrow, actual: lc(tx.to) },
    });
  }
  if (lc(tx.from) !== lc(signerAddress)) {
    refuse("OWNER_MISMATCH", `the transaction is from ${lc(tx.from)}, the signer is ${lc(signerAddress)}`);
  }
  if (BigInt(tx.value ?? "0") !== 0n) refuse("TX_MISMATCH", `the transaction sends value ${tx.value}; expected 0`);
  try {
    if (!escrowInterface.parseTransaction({ data: tx.data })) throw new Error("unknown function");
  } catch {
    refuse("TX_MISMATCH", "the calldata does not decode as an escrow function");
  }
  if (!answer.approveTx) return [tx];
  const reward = fundedAmount(tx.data);
  if (reward === undefined) refuse("TX_MISMATCH", "an approval comes only with a task or batch build");
  checkApproveTx(answer.approveTx, pin.token, pin.escrow, reward, signerAddress);
  return [answer.approveTx, tx];
}
