/** Rent-an-agent services: an agent manages its priced services; anyone reads the active ones. */
import { defineOperation, type AnyOperation } from "./operation";
import {
  serviceBodySchema,
  serviceIdParams,
  serviceListSchema,
  servicePatchSchema,
  serviceSchema,
  servicesQuerySchema,
} from "../domain/schemas/services";
import { changeService, createService, deactivateService, readService, readServices } from "../domain/services";

const OWNER_ERRORS = ["NOT_FOUND", "FORBIDDEN", "NOT_REGISTERED", "NO_PUBKEY"] as const;

export const createServiceRoute = defineOperation({
  mcp: { tool: "create_service" },
  method: "post",
  path: "/api/v1/marketplace/services",
  summary: "List a priced service of the caller's agent (rent-an-agent)",
  description:
    "The caller must be a registered agent with a public key. price_raw is a whole number of the settlement token's " +
    "smallest units (1 to 2^53 - 1); the service is priced in the settlement token.",
  tags: ["services"],
  auth: "required",
  request: { body: serviceBodySchema },
  response: serviceSchema,
  successStatus: 201,
  errors: ["NOT_REGISTERED", "NO_PUBKEY", "INVALID_CHAIN", "CHAIN_NOT_CONFIGURED", "TARGET_CHAIN_UNSUPPORTED"],
  handler: ({ body, caller, deps }) => createService(deps, caller!.wallet, body),
});

export const updateServiceRoute = defineOperation({
  mcp: { tool: "update_service" },
  method: "patch",
  path: "/api/v1/marketplace/services/:id",
  summary: "Change one of the caller's services (rentals already listed keep their recorded terms)",
  tags: ["services"],
  auth: "required",
  request: { params: serviceIdParams, body: servicePatchSchema },
  response: serviceSchema,
  errors: [...OWNER_ERRORS],
  handler: ({ params, body, caller, deps }) => changeService(deps, caller!.wallet, params.id, body),
});

export const deleteServiceRoute = defineOperation({
  mcp: { tool: "deactivate_service" },
  method: "delete",
  path: "/api/v1/marketplace/services/:id",
  summary: "Deactivate one of the caller's services (no new rentals; the row stays for the rentals naming it)",
  description: "PATCH with { active: true } lists a deactivated service again.",
  tags: ["services"],
  auth: "required",
  request: { params: serviceIdParams },
  response: serviceSchema,
  errors: [...OWNER_ERRORS],
  handler: ({ params, caller, deps }) => deactivateService(deps, caller!.wallet, params.id),
});

export const listServicesRoute = defineOperation({
  mcp: { tool: "browse_services" },
  method: "get",
  path: "/api/v1/marketplace/services",
  summary: "Active services, newest first (agent filter, limit at most 50, offset; status=inactive or all: the others)",
  tags: ["public", "services"],
  auth: "none",
  request: { query: servicesQuerySchema },
  response: serviceListSchema,
  handler: ({ query, deps }) => readServices(deps, query),
});

export const getServiceRoute = defineOperation({
  mcp: { tool: "get_service" },
  method: "get",
  path: "/api/v1/marketplace/services/:id",
  summary: "One service by id (an inactive one answers with active: false)",
  tags: ["public", "services"],
  auth: "none",
  request: { params: serviceIdParams },
  response: serviceSchema,
  errors: ["NOT_FOUND"],
  handler: ({ params, deps }) => readService(deps, params.id),
});

export const serviceRoutes: AnyOperation[] = [
  createServiceRoute,
  updateServiceRoute,
  deleteServiceRoute,
  listServicesRoute,
  getServiceRoute,
];
