/**
 * Pull payments: what a wallet is owed by the escrow (open-task winners, bond returns, forfeited bonds and the halves
 * of a split dispute are credited, never pushed) and the unsigned withdraw that takes it. Figures come from the
 * indexed Credited and Withdrawn events (server/escrow/credits.ts).
 */
import type { Deps } from "./deps";
import { fail } from "../errors";
import { encodeWithdraw } from "../chain/escrowCalls";
import { listCreditEventsOf } from "../db/repositories/escrowEvents";
import { foldCredits, type CreditBalance } from "../escrow/credits";
import { ZERO_ADDRESS } from "../escrow/records";

export interface CreditsView {
  account: string;
  credits: CreditBalance[];
}

export interface WithdrawResult {
  token: string;
  to: string;
  /** What the index shows as owed: withdraw sends the whole credit at the time it is mined. */
  amount: string;
  unsignedTx: { to: string; data: string; from: string; value: "0" };
  chain: "base" | "arc";
  chainId: number;
}

/** GET /credits/{address}: one balance per token the wallet was ever credited in. */
export async function readCredits(deps: Deps, account: string): Promise<CreditsView> {
  const who = account.toLowerCase();
  return {
    account: who,
    credits: foldCredits(await listCreditEventsOf(deps.db, deps.config.api.postingChain, who), who),
  };
}

/**
 * POST /credits/withdraw { token, to? }: the unsigned withdraw(token, to) for the caller, `to` defaulting to the
 * caller (another address when the caller cannot receive). Not refused while the escrow is paused (withdraw is not
 * pause-gated). Refusals: VALIDATION_ERROR (to is the zero address), INVALID_STATE (nothing owed in that token as
 * indexed: the escrow would revert NothingOwed), CHAIN_NOT_CONFIGURED.
 */
export async function buildWithdraw(
  deps: Deps,
  wallet: string,
  body: { token: string; to?: string },
): Promise<WithdrawResult> {
  const caller = wallet.toLowerCase();
  const token = body.token.toLowerCase();
  const to = (body.to ?? caller).toLowerCase();
  if (to === ZERO_ADDRESS) fail("VALIDATION_ERROR", "to: must not be the zero address (the escrow refuses it)");
  const chain = deps.chain;
  if (!chain) return fail("CHAIN_NOT_CONFIGURED", "no escrow is configured on the posting chain");
  const { credits } = await readCredits(deps, caller);
  const owed = credits.find((c) => c.token === token)?.owed ?? "0";
  if (owed === "0") {
    fail(
      "INVALID_STATE",
      `token: ${caller} is owed nothing in ${token} (GET /api/v1/credits/${caller} lists what it is owed)`,
    );
  }
  return {
    token,
    to,
    amount: owed,
    unsignedTx: { to: chain.book.escrow.proxy, data: encodeWithdraw(token, to), from: caller, value: "0" },
    chain: deps.config.api.postingChain as WithdrawResult["chain"],
    chainId: chain.book.chainId,
  };
}
