/** The pull-payment routes: what a wallet is owed, and the unsigned withdraw. */
import { address, chainName, z } from "./common";
import { unsignedTxSchema } from "./posting";

const amount = z.string().openapi({ description: "Raw token units, as a decimal string", example: "49500000" });

export const creditsSchema = z
  .object({
    account: z.string(),
    credits: z.array(
      z.object({
        chain: z.enum(["base", "arc"]).openapi({ description: "The settlement chain whose escrow owes it" }),
        chainId: z.number().int(),
        token: z.string().openapi({ description: "The token (the zero address for the native currency)" }),
        owed: amount.openapi({ description: "What withdraw would send now (the escrow's creditOf, as indexed)" }),
        credited: amount.openapi({ description: "Everything ever credited in this token" }),
        withdrawn: amount.openapi({ description: "Everything ever withdrawn in this token" }),
      }),
    ),
  })
  .openapi("Credits");

export const creditsQuerySchema = z
  .object({
    chain: chainName
      .optional()
      .openapi({ description: "One settlement chain's credits (default: every chain the service settles on)" }),
  })
  .openapi("CreditsQuery");

export const withdrawBodySchema = z
  .object({
    token: address.openapi({ description: "The token to withdraw (the zero address for the native currency)" }),
    to: address
      .optional()
      .openapi({ description: "Recipient; defaults to your wallet (another address when yours cannot receive)" }),
    chain: chainName
      .optional()
      .openapi({ description: "The chain whose escrow owes the credit (default: the posting chain)" }),
  })
  .strict()
  .openapi("WithdrawBody");

export const withdrawAnswerSchema = z
  .object({
    token: z.string(),
    to: z.string(),
    amount: amount.openapi({ description: "What the index shows as owed; withdraw sends the whole credit when mined" }),
    unsignedTx: unsignedTxSchema,
    chain: z.enum(["base", "arc"]),
    chainId: z.number().int(),
  })
  .openapi("WithdrawResult");
