/**
 * Shared schemas. Custom checks carry the spec's error code in `params.errorCode`; the validation layer answers
 * that code instead of VALIDATION_ERROR.
 */
import { extendZodWithOpenApi } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import type { ErrorCode } from "../../errors";
import { MAX_DURATION, MIN_DURATION } from "../../escrow/rules";
import { CHAIN_NAMES, type ChainName } from "../../escrow/records";

extendZodWithOpenApi(z);

export { z };

/** Adds an issue whose error code is `errorCode`. */
export function issue(ctx: z.RefinementCtx, errorCode: ErrorCode, message: string) {
  ctx.addIssue({ code: z.ZodIssueCode.custom, message, params: { errorCode } });
}

/** A settlement chain's name (`base`, `arc`); anything else is INVALID_CHAIN (the spec's code for an unknown chain). */
export const chainName = z
  .string()
  .superRefine((v, ctx) => {
    if (!(CHAIN_NAMES as readonly string[]).includes(v)) {
      issue(ctx, "INVALID_CHAIN", `unknown settlement chain ${JSON.stringify(v)}: use ${CHAIN_NAMES.join(" or ")}`);
    }
  })
  .transform((v) => v as ChainName)
  .openapi({ type: "string", enum: [...CHAIN_NAMES], description: "A settlement chain's name" });

export const MAX_UINT256 = (1n << 256n) - 1n;

export const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "must be 0x followed by 40 hex characters")
  .transform((v) => v.toLowerCase())
  .openapi({ example: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", description: "20-byte EVM address" });

export const bytes32 = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, "must be 0x followed by 64 hex characters")
  .transform((v) => v.toLowerCase())
  .openapi({ example: `0x${"ab".repeat(32)}` });

export const txHash = bytes32.openapi({ description: "Transaction hash" });

/** A task hash: a 0x SHA-256, never zero (EMPTY_HASH). */
export const taskHash = bytes32.superRefine((v, ctx) => {
  if (/^0x0{64}$/.test(v)) issue(ctx, "EMPTY_HASH", "taskHash must not be zero");
});

/** Whole number above 0, at most 2^256 - 1, as a decimal string (INVALID_AMOUNT). */
export const amount = z
  .string({ invalid_type_error: "must be a string of digits" })
  .superRefine((v, ctx) => {
    if (!/^[0-9]+$/.test(v) || BigInt(v) === 0n) {
      issue(ctx, "INVALID_AMOUNT", "amount must be a whole number above 0 in the token's smallest unit");
    } else if (BigInt(v) > MAX_UINT256) {
      issue(ctx, "INVALID_AMOUNT", "amount must be at most 2^256 - 1");
    }
  })
  .openapi({
    example: "5000000",
    description: "A decimal string in the token's smallest unit (USDC has 6 decimals: 5000000 is 5 USDC)",
  });

/**
 * Whole seconds from 3600 to 7776000 (INVALID_DURATION). The spec writes it as a string of digits; a JSON integer is
 * accepted too and documented as such (docs/api.md), so the document and the validator agree.
 */
export const duration = z
  .union([z.string(), z.number()])
  .superRefine((v, ctx) => {
    const s = String(v);
    if (!/^[0-9]+$/.test(s) || Number(s) === 0) {
      issue(ctx, "INVALID_DURATION", "duration must be whole seconds above 0");
    } else if (Number(s) < MIN_DURATION || Number(s) > MAX_DURATION) {
      issue(ctx, "INVALID_DURATION", `duration must be from ${MIN_DURATION} to ${MAX_DURATION} seconds`);
    }
  })
  .transform((v) => Number(v))
  .openapi({
    anyOf: [
      { type: "string", pattern: "^[0-9]+$", description: "whole seconds as a decimal string (the spec's form)" },
      { type: "integer", minimum: MIN_DURATION, maximum: MAX_DURATION, description: "whole seconds as a JSON integer" },
    ],
    example: "86400",
  });

export const pagination = (maxLimit: number, defaultLimit: number) =>
  z.object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(maxLimit)
      .default(defaultLimit)
      .openapi({ description: `Page size: at most ${maxLimit} items (default ${defaultLimit})` }),
    offset: z.coerce.number().int().min(0).default(0).openapi({ description: "Items to skip, for the next page" }),
  });

export const errorEnvelope = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.string(),
      message: z.string(),
      reason: z.string().optional(),
      details: z.record(z.unknown()).optional(),
    }),
  })
  .openapi("ErrorEnvelope");

/** A page's size in list queries: at most 200 items, 50 by default. */
export const pageLimit = z.coerce
  .number()
  .int()
  .min(1)
  .max(200)
  .default(50)
  .openapi({ type: "integer", description: "Page size: at most 200 items (default 50)" });

/** Offsets beyond any real listing, bounded so no database sees an out-of-range integer. */
export const pageOffset = z.coerce
  .number()
  .int()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .default(0)
  .openapi({ type: "integer", description: "Items to skip, for the next page" });
