/**
 * Pull payments: what a wallet is owed by the escrow (open-task winners, bond returns, forfeited bonds and the halves
 * of a split dispute are credited, never pushed) and the unsigned withdraw that takes it. Figures come from the
 * indexed Credited and Withdrawn events (server/escrow/credits.ts). Each settlement chain's escrow owes its own
 * credits: a balance names its chain, and a withdraw is built for one chain's escrow.
 */
import type { Deps } from "./deps";
import { fail } from "../errors";
import { encodeWithdraw } from "../chain/escrowCalls";
import { listCreditEventsOf } from "../db/repositories/escrowEvents";
import { foldCredits, type CreditBalance } from "../escrow/credits";
import { ZERO_ADDRESS, type ChainName } from "../escrow/records";
import { chainGateway, chainGateways } from "./chainGateways";

/** One token's balance on one chain's escrow. */
export interface ChainCreditBalance extends CreditBalance {
  chain: ChainName;
  chainId: number;
}

export interface CreditsView {
  account: string;
  credits: ChainCreditBalance[];
}

export interface WithdrawResult {
  token: string;
  to: string;
  /** What the index shows as owed: withdraw sends the whole credit at the time it is mined. */
  amount: string;
  unsignedTx: { to: string; data: string; from: string; value: "0" };
  chain: ChainName;
  chainId: number;
}

/** What `who` is owed on one chain's escrow, per token. */
async function creditsOn(deps: Deps, chain: ChainName, who: string): Promise<ChainCreditBalance[]> {
  const { chainId } = chainGateway(deps, chain).book;
  const balances = foldCredits(await listCreditEventsOf(deps.db, chain, who), who);
  return balances.map((b) => ({ chain, chainId, ...b }));
}

/**
 * GET /credits/{address}?chain=: one balance per chain and token the wallet was ever credited in, on `chain` alone
 * when named (CHAIN_NOT_CONFIGURED when this service has no deployment there), else on every chain it settles on
 * (posting chain first).
 */
export async function readCredits(
  deps: Deps,
  account: string,
  query: { chain?: ChainName } = {},
): Promise<CreditsView> {
  const who = account.toLowerCase();
  const chains = query.chain ? [query.chain] : chainGateways(deps).map((g) => g.name);
  const credits: ChainCreditBalance[] = [];
  for (const chain of chains) credits.push(...(await creditsOn(deps, chain, who)));
  return { account: who, credits };
}

/**
 * POST /credits/withdraw { token, to?, chain? }: the unsigned withdraw(token, to) for the caller on `chain`'s escrow
 * (the posting chain when none is named), `to` defaulting to the caller (another address when the caller cannot
 * receive). Not refused while the escrow is paused (withdraw is not pause-gated). Refusals: VALIDATION_ERROR (to is
 * the zero address), INVALID_CHAIN, CHAIN_NOT_CONFIGURED, INVALID_STATE (nothing owed in that token on that chain as
 * indexed: the escrow would revert NothingOwed).
 */
export async function buildWithdraw(
  deps: Deps,
  wallet: string,
  body: { token: string; to?: string; chain?: ChainName },
): Promise<WithdrawResult> {
  const caller = wallet.toLowerCase();
  const token = body.token.toLowerCase();
  const to = (body.to ?? caller).toLowerCase();
  if (to === ZERO_ADDRESS) fail("VALIDATION_ERROR", "to: must not be the zero address (the escrow refuses it)");
  const gateway = chainGateway(deps, body.chain);
  const chain = gateway.name;
  const credits = await creditsOn(deps, chain, caller);
  const owed = credits.find((c) => c.token === token)?.owed ?? "0";
  if (owed === "0") {
    fail(
      "INVALID_STATE",
      `token: ${caller} is owed nothing in ${token} on ${chain} (GET /api/v1/credits/${caller} lists what it is owed)`,
      { details: { chain } },
    );
  }
  return {
    token,
    to,
    amount: owed,
    unsignedTx: { to: gateway.book.escrow.proxy, data: encodeWithdraw(token, to), from: caller, value: "0" },
    chain,
    chainId: gateway.book.chainId,
  };
}
