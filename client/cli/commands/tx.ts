/**
 * `market tx send`: finishes, from a terminal, any flow whose answer is an unsigned transaction (a curl of the REST
 * API, an MCP tool's answer saved to a file). It reads the answer as JSON, runs the careful client's checks against
 * the settlement record and the RPC, then signs with the configured wallet and sends: the approval first when the
 * answer carries one, each waited for, and prints the hashes.
 */
import fs from "node:fs";
import type { Context } from "../context";
import { apiOf, walletOf } from "../clients";
import {
  checkRpc,
  checkSendable,
  pinSettlement,
  TxSender,
  type SendableAnswer,
  type UnsignedTx,
} from "../../sdk/index";
import { usageError } from "../errors";

/** The text of `file`, or of stdin when it is `-` or absent. */
function readInput(file: string | undefined): string {
  try {
    return fs.readFileSync(file === undefined || file === "-" ? 0 : file, "utf8");
  } catch (error) {
    throw usageError("INVALID_INPUT", `cannot read ${file ?? "stdin"}: ${(error as Error).message}`);
  }
}

const isTx = (v: unknown): v is UnsignedTx =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as UnsignedTx).to === "string" &&
  typeof (v as UnsignedTx).data === "string" &&
  typeof (v as UnsignedTx).from === "string";

/**
 * The answer in `text`: the REST envelope `{ success, data }`, an answer with `unsignedTx` (and `approveTx`,
 * `chainId`), or a bare `{ to, data, from }`.
 */
export function parseSendable(text: string): SendableAnswer {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw usageError("INVALID_INPUT", "the input is not JSON: give the API's answer carrying unsignedTx");
  }
  const record = value as Record<string, unknown> | null;
  const data = (record && typeof record === "object" && "data" in record && !isTx(record) ? record.data : value) as
    Record<string, unknown> | undefined;
  if (isTx(data)) return { unsignedTx: data };
  if (data && isTx(data.unsignedTx)) {
    const approveTx = data.approveTx;
    if (approveTx !== undefined && approveTx !== null && !isTx(approveTx)) {
      throw usageError("INVALID_INPUT", "approveTx must be { to, data, from } or null");
    }
    return {
      unsignedTx: data.unsignedTx,
      approveTx: approveTx ?? null,
      ...(data.chain === "base" || data.chain === "arc" ? { chain: data.chain } : {}),
      ...(typeof data.chainId === "number" ? { chainId: data.chainId } : {}),
    };
  }
  throw usageError(
    "INVALID_INPUT",
    "the input carries no unsigned transaction: give { unsignedTx, approveTx?, chain?, chainId? } or { to, data, from }",
  );
}

export async function send(ctx: Context, file: string | undefined): Promise<void> {
  const answer = parseSendable(readInput(file));
  // The chain the answer is for (named, or found by its chain id; the posting chain for a bare transaction): its
  // entry of the settlement record is what the transaction is checked against, and its RPC signs.
  const settlement = await apiOf(ctx, false).settlement();
  const chain = answer.chain ?? settlement.chains.find((c) => c.chainId === answer.chainId)?.chain;
  const pin = pinSettlement(settlement, undefined, chain);
  const signer = walletOf(ctx, pin.chain);
  await checkRpc(signer, pin);
  const txs = checkSendable(answer, pin, signer.address);
  const sender = new TxSender(signer);
  const hashes: string[] = [];
  for (const tx of txs) {
    const isApproval = tx.to.toLowerCase() === pin.token;
    const hash = await ctx.out.step(
      isApproval ? `approving the escrow for exactly the reward` : `sending the transaction to the escrow`,
      async () => {
        const signed = await sender.send({
          to: tx.to,
          data: tx.data,
          ...(tx.gas !== undefined ? { gasLimit: BigInt(tx.gas) } : {}),
        });
        await sender.wait(signed.hash);
        return signed.hash;
      },
      (h) => `tx ${h}`,
    );
    hashes.push(hash);
  }
  const txHash = hashes[hashes.length - 1];
  ctx.out.result({ txHash, ...(hashes.length > 1 ? { approveTxHash: hashes[0] } : {}) }, [
    ...(hashes.length > 1 ? [`Approved in ${hashes[0]}.`] : []),
    `Sent and confirmed: ${txHash}`,
  ]);
}
