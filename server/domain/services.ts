/**
 * Rent-an-agent services: a registered agent lists priced offerings (name, description, price in the settlement
 * token's smallest units, capabilities, optional delivery time) and manages them with its API key; anyone reads the
 * active ones. A poster rents one by funding a task paying at least the price and listing it with `targetExecutor`
 * and `serviceId` (rentalTerms: SERVICE_NOT_ACTIVE, SERVICE_AGENT_MISMATCH, SERVICE_TOKEN_MISMATCH, UNDERPAID); the
 * terms are recorded with the listing and never change after.
 *
 * Decisions (docs/api.md "Services"): only the owner changes a service (FORBIDDEN); the public key shown is the
 * agent's registered key (NOT_REGISTERED / NO_PUBKEY when it has none); prices are whole numbers up to 2^53 - 1 so
 * responses carry exact JSON integers; DELETE deactivates (the row stays, for the rentals that name it) and
 * `GET /services/{id}` still answers an inactive service, with `active: false`, while lists show active ones only.
 */
import type { Deps } from "./deps";
import { fail } from "../errors";
import { findExecutor, type ExecutorRecord } from "../db/repositories/executors";
import {
  findService,
  insertService,
  listActiveServices,
  updateService,
  type ServiceRecord,
} from "../db/repositories/services";
import type { ServiceBody, ServicePatch, ServicesQuery, ServiceView } from "./schemas/services";
import { chainGateway } from "./chainGateways";
import { chainRefusal } from "./marketplace/chainRules";

/** The service terms a rental was listed with (stored with the listing). */
export interface RentalTerms {
  serviceId: number;
  name: string;
  priceRaw: string;
  token: string;
  agent: string;
}

function view(service: ServiceRecord, publicKey: string): ServiceView {
  return {
    id: service.id,
    name: service.name,
    description: service.description,
    price_raw: Number(service.priceRaw),
    agent_address: service.agentAddress,
    agent_public_key: publicKey,
    token: service.token,
    capabilities: service.capabilities,
    delivery_time_seconds: service.deliverySeconds,
    active: service.active,
    created_at: service.createdAt,
    updated_at: service.updatedAt,
  };
}

async function requireSeller(deps: Deps, wallet: string): Promise<ExecutorRecord> {
  const executor = await findExecutor(deps.db, wallet);
  if (!executor) {
    return fail("NOT_REGISTERED", "register as an agent (POST /api/v1/a2a/executors) before listing services");
  }
  if (!executor.publicKey) return fail("NO_PUBKEY", "register a public key before listing services");
  return executor;
}

/**
 * POST /marketplace/services: lists a service of the caller (a registered agent), priced in the settlement token of
 * the chain it is rented on (`chain`, default the posting chain): CHAIN_NOT_CONFIGURED without a deployment there,
 * TARGET_CHAIN_UNSUPPORTED when the agent does not settle there (a rental pinned to it could never be listed).
 */
export async function createService(deps: Deps, wallet: string, body: ServiceBody): Promise<ServiceView> {
  const executor = await requireSeller(deps, wallet);
  const gateway = chainGateway(deps, body.chain);
  const refused = chainRefusal("TARGET_CHAIN_UNSUPPORTED", executor, gateway.name, "a rental of this service");
  if (refused) throw refused;
  const now = deps.clock.wallNow();
  const service = await insertService(deps.db, {
    agentAddress: executor.address,
    name: body.name,
    description: body.description,
    priceRaw: body.price_raw,
    token: gateway.book.token.address.toLowerCase(),
    capabilities: body.capabilities,
    deliverySeconds: body.delivery_time_seconds ?? null,
    active: true,
    createdAt: now,
    updatedAt: now,
  });
  return view(service, executor.publicKey);
}

async function ownService(
  deps: Deps,
  wallet: string,
  id: number,
): Promise<{ service: ServiceRecord; seller: ExecutorRecord }> {
  const service = await findService(deps.db, id);
  if (!service) return fail("NOT_FOUND", `no service has id ${id}`);
  if (service.agentAddress !== wallet.toLowerCase()) {
    return fail("FORBIDDEN", `service ${id} belongs to ${service.agentAddress}: only its agent may change it`);
  }
  return { service, seller: await requireSeller(deps, wallet) };
}

/** PATCH /marketplace/services/{id}: the owner changes fields (a rental already listed keeps its recorded terms). */
export async function changeService(deps: Deps, wallet: string, id: number, patch: ServicePatch): Promise<ServiceView> {
  const { seller } = await ownService(deps, wallet, id);
  await updateService(deps.db, id, {
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(patch.description !== undefined ? { description: patch.description } : {}),
    ...(patch.price_raw !== undefined ? { priceRaw: patch.price_raw } : {}),
    ...(patch.capabilities !== undefined ? { capabilities: patch.capabilities } : {}),
    ...(patch.delivery_time_seconds !== undefined ? { deliverySeconds: patch.delivery_time_seconds } : {}),
    ...(patch.active !== undefined ? { active: patch.active } : {}),
    updatedAt: deps.clock.wallNow(),
  });
  return view((await findService(deps.db, id))!, seller.publicKey);
}

/** DELETE /marketplace/services/{id}: the owner deactivates it (no new rentals; listed ones are unaffected). */
export async function deactivateService(deps: Deps, wallet: string, id: number): Promise<ServiceView> {
  return changeService(deps, wallet, id, { active: false });
}

async function publicKeysOf(deps: Deps, services: readonly ServiceRecord[]): Promise<Map<string, string>> {
  const keys = new Map<string, string>();
  for (const agent of new Set(services.map((s) => s.agentAddress))) {
    keys.set(agent, (await findExecutor(deps.db, agent))?.publicKey ?? "");
  }
  return keys;
}

/** GET /marketplace/services: active services (or inactive ones, or all: `status`), newest first. */
export async function readServices(
  deps: Deps,
  query: ServicesQuery,
): Promise<{ services: ServiceView[]; total: number }> {
  const page = await listActiveServices(deps.db, query);
  const keys = await publicKeysOf(deps, page.services);
  return { services: page.services.map((s) => view(s, keys.get(s.agentAddress) ?? "")), total: page.total };
}

/** GET /marketplace/services/{id}. */
export async function readService(deps: Deps, id: number): Promise<ServiceView> {
  const service = await findService(deps.db, id);
  if (!service) return fail("NOT_FOUND", `no service has id ${id}`);
  const keys = await publicKeysOf(deps, [service]);
  return view(service, keys.get(service.agentAddress) ?? "");
}

/** An agent's active services (its agent card's skills). */
export async function activeServicesOf(deps: Deps, address: string): Promise<ServiceView[]> {
  return (await readServices(deps, { agent: address.toLowerCase(), status: "active", limit: 50, offset: 0 })).services;
}

/**
 * The terms of a rental: the service must be active, sold by the task's target executor, priced in the task's token,
 * and the task must pay at least its price.
 */
export async function rentalTerms(
  deps: Deps,
  rental: { serviceId: number; targetExecutor: string; token: string; amount: string },
): Promise<RentalTerms> {
  const service = await findService(deps.db, rental.serviceId);
  if (!service || !service.active) {
    return fail("SERVICE_NOT_ACTIVE", `serviceId: service ${rental.serviceId} is not an active service`);
  }
  if (service.agentAddress !== rental.targetExecutor.toLowerCase()) {
    return fail(
      "SERVICE_AGENT_MISMATCH",
      `serviceId: service ${service.id} is sold by ${service.agentAddress}, not by targetExecutor ${rental.targetExecutor.toLowerCase()}`,
    );
  }
  if (service.token !== rental.token.toLowerCase()) {
    return fail(
      "SERVICE_TOKEN_MISMATCH",
      `serviceId: service ${service.id} is priced in ${service.token}; the task was funded in ${rental.token.toLowerCase()}`,
    );
  }
  if (BigInt(rental.amount) < BigInt(service.priceRaw)) {
    return fail(
      "UNDERPAID",
      `the task pays ${rental.amount} but service ${service.id} costs ${service.priceRaw} (smallest units of ${service.token})`,
      { details: { price_raw: Number(service.priceRaw), amount: rental.amount } },
    );
  }
  return {
    serviceId: service.id,
    name: service.name,
    priceRaw: service.priceRaw,
    token: service.token,
    agent: service.agentAddress,
  };
}
