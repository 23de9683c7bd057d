/**
 * What the CLI knows about the devnet (`npm run devnet`): whether the service is one (it alone answers
 * GET /api/v1/devnet/wallets), and `market faucet`, which gives the signing wallet test USDC and gas on it. Every
 * devnet start is a new chain with new keys, so a saved API key stops working after a restart.
 */
import { Contract, parseEther, toQuantity } from "ethers";
import type { Context } from "../context";
import { apiOf, walletOf } from "../clients";
import { amountText } from "../format";
import { parseAmountInput, amountRaw } from "../parse";
import { pinSettlement, type MarketApi } from "../../sdk/index";
import { CliError } from "../errors";
import { EXIT } from "../exitCodes";

/** True when the service is a devnet; false when it answers that it is not, or cannot be asked. */
export async function isDevnet(api: MarketApi): Promise<boolean> {
  try {
    await api.devnetWallets();
    return true;
  } catch {
    return false;
  }
}

/** What to do about an API key the devnet does not know: it was restarted (a new chain, new keys). */
export const DEVNET_UNAUTHORIZED_HINT =
  "this service is a devnet, and every devnet start is a new chain with new keys: it was restarted since your key was made. Run `market login` again (or take a key from .devnet/accounts.json)";

/** How to get test USDC on a devnet. */
export const FAUCET_HINT = "this is a devnet: `market faucet` gives your wallet test USDC and gas";

/** The test money a faucet call gives when no amount is named: 1,000 USDC. */
const DEFAULT_FAUCET_AMOUNT = "1000";
/** Gas money: the wallet is topped up to this when it holds less. */
const FAUCET_GAS = parseEther("10");

const MINT_ABI = ["function mint(address to, uint256 amount)", "function balanceOf(address) view returns (uint256)"];

/**
 * `market faucet`: on a devnet only, mints test USDC (the devnet's MockUSDC mints to anyone) to the signing wallet and
 * tops its gas up through the devnet chain's `hardhat_setBalance`.
 */
export async function faucet(ctx: Context, options: { amount?: string; amountRaw?: string }): Promise<void> {
  const api = apiOf(ctx, false);
  if (!(await isDevnet(api))) {
    throw new CliError({
      code: "NOT_DEVNET",
      message: `${ctx.config.apiUrl} is not a devnet: the faucet gives test money on the devnet only`,
      hint: "buy or bridge the settlement token to your wallet; `market faucet` is for `npm run devnet`",
      exit: EXIT.REFUSED,
    });
  }
  const pin = pinSettlement(await api.settlement());
  const amount = amountRaw(
    parseAmountInput(
      options.amount === undefined && options.amountRaw === undefined ? { amount: DEFAULT_FAUCET_AMOUNT } : options,
    ),
    pin.decimals,
  );
  const wallet = walletOf(ctx);
  const provider = wallet.provider!;
  const token = { symbol: pin.symbol, decimals: pin.decimals };
  const gas = await provider.getBalance(wallet.address);
  if (gas < FAUCET_GAS) {
    await ctx.out.step(`giving ${wallet.address} gas money`, async () => {
      await (provider as unknown as { send(method: string, params: unknown[]): Promise<unknown> }).send(
        "hardhat_setBalance",
        [wallet.address, toQuantity(FAUCET_GAS)],
      );
    });
  }
  const usdc = new Contract(pin.token, MINT_ABI, wallet);
  const tx = await ctx.out.step(
    `minting ${amountText(amount, token)} to ${wallet.address}`,
    async () => {
      const sent = await usdc.getFunction("mint")(wallet.address, amount);
      await sent.wait();
      return sent.hash as string;
    },
    (hash) => `tx ${hash}`,
  );
  const balance = (await usdc.getFunction("balanceOf")(wallet.address)) as bigint;
  ctx.out.result(
    { address: wallet.address, minted: amount.toString(), balance: balance.toString(), txHash: tx },
    `${wallet.address} now holds ${amountText(balance, token)} (test money of this devnet only).`,
  );
}
