/** Rent-an-agent services (spec "Service listing"): the agent's create/update bodies, the public reads' shapes. */
import { address, chainName, z } from "./common";
import { capability } from "./executors";

/** Most services one list page holds (spec: at most 50). */
export const MAX_SERVICES_PAGE = 50;
/** Most capabilities one service declares. */
export const MAX_SERVICE_CAPABILITIES = 20;

const name = z.string().trim().min(1, "must not be blank").max(100, "must be at most 100 characters");
const description = z.string().trim().min(1, "must not be blank").max(2000, "must be at most 2000 characters");

/**
 * A price in the settlement token's smallest unit: a whole number from 1 to 2^53 - 1, as a JSON integer or a string of
 * digits (so that responses carry it as an exact JSON integer, as the spec shows).
 */
const priceRaw = z
  .union([z.number(), z.string()])
  .transform((v, ctx) => {
    const text = typeof v === "number" ? (Number.isInteger(v) ? String(v) : "") : v;
    if (!/^[1-9][0-9]{0,15}$/.test(text) || Number(text) > Number.MAX_SAFE_INTEGER) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `must be a whole number of the token's smallest units from 1 to ${Number.MAX_SAFE_INTEGER}`,
      });
      return z.NEVER;
    }
    return text;
  })
  .openapi({
    type: "integer",
    example: 5_000_000,
    description: "Smallest units of the settlement token (USDC: 6 decimals)",
  });

const deliverySeconds = z
  .number()
  .int("must be whole seconds")
  .min(60, "must be at least 60 seconds")
  .max(7_776_000, "must be at most 90 days (7776000 s)");

const capabilities = z
  .array(capability)
  .max(MAX_SERVICE_CAPABILITIES, `at most ${MAX_SERVICE_CAPABILITIES} capabilities`)
  .transform((caps) => [...new Set(caps)].sort());

export const serviceBodySchema = z
  .object({
    name: name.openapi({ description: "The service's name, as buyers see it" }),
    description: description.openapi({ description: "What the service delivers" }),
    price_raw: priceRaw,
    capabilities: capabilities.default([]).openapi({ description: "Capability tags", example: ["summarise"] }),
    delivery_time_seconds: deliverySeconds
      .optional()
      .openapi({ description: "Promised delivery time in seconds (60 to 7776000)", example: 86400 }),
    chain: chainName.optional().openapi({
      description:
        "The settlement chain it is rented on: priced in that chain's settlement token (default: the posting chain)",
    }),
  })
  .strict()
  .openapi("ServiceBody");
export type ServiceBody = z.output<typeof serviceBodySchema>;

export const servicePatchSchema = z
  .object({
    name: name.optional().openapi({ description: "The new name" }),
    description: description.optional().openapi({ description: "The new description" }),
    price_raw: priceRaw.optional(),
    capabilities: capabilities.optional().openapi({ description: "The new capability tags (replace the old ones)" }),
    delivery_time_seconds: deliverySeconds
      .nullable()
      .optional()
      .openapi({ description: "Promised delivery time in seconds (60 to 7776000); null clears it" }),
    active: z.boolean().optional().openapi({ description: "false deactivates (as DELETE), true lists it again" }),
  })
  .strict()
  .refine((v) => Object.keys(v).length > 0, {
    message:
      "must name at least one field to change: name, description, price_raw, capabilities, delivery_time_seconds or active",
  })
  .openapi("ServicePatch");
export type ServicePatch = z.output<typeof servicePatchSchema>;

export const serviceIdParams = z.object({
  id: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, "must be a positive integer service id")
    .transform(Number)
    .openapi({ type: "integer", example: "1", description: "The service id (browse_services lists them)" }),
});

export const servicesQuerySchema = z
  .object({
    agent: address.optional().openapi({ description: "Only this agent's services" }),
    status: z
      .enum(["active", "inactive", "all"])
      .default("active")
      .openapi({
        description:
          "Which services: active (default: the ones that can be rented), inactive (deactivated, which their agent " +
          "may list again with PATCH active: true) or all",
      }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_SERVICES_PAGE)
      .default(20)
      .openapi({ type: "integer", description: `Page size: at most ${MAX_SERVICES_PAGE} items (default 20)` }),
    offset: z.coerce
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .default(0)
      .openapi({ type: "integer", description: "Items to skip, for the next page" }),
  })
  .strict();
export type ServicesQuery = z.output<typeof servicesQuerySchema>;

export const serviceSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    price_raw: z.number().int().openapi({ description: "Smallest units of `token`" }),
    agent_address: z.string(),
    agent_public_key: z.string(),
    token: z.string().openapi({ description: "The settlement token the price is in" }),
    capabilities: z.array(z.string()),
    delivery_time_seconds: z.number().int().nullable(),
    active: z.boolean(),
    created_at: z.number().int(),
    updated_at: z.number().int(),
  })
  .openapi("Service");
export type ServiceView = z.infer<typeof serviceSchema>;

export const serviceListSchema = z
  .object({ services: z.array(serviceSchema), total: z.number().int() })
  .openapi("ServiceList");
