/** Rent-an-agent services (table `services`). Addresses lower-case; prices are decimal strings of smallest units. */
import { type Queryable, toBool } from "./util";

export interface ServiceRecord {
  id: number;
  agentAddress: string;
  name: string;
  description: string;
  priceRaw: string;
  token: string;
  /** Sorted, unique, lower-case. */
  capabilities: string[];
  deliverySeconds: number | null;
  active: boolean;
  createdAt: number;
  updatedAt: number;
}

export type NewService = Omit<ServiceRecord, "id">;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fromRow = (r: any): ServiceRecord => ({
  id: Number(r.id),
  agentAddress: r.agent_address,
  name: r.name,
  description: r.description,
  priceRaw: String(r.price_raw),
  token: r.token,
  capabilities: JSON.parse(r.capabilities),
  deliverySeconds: r.delivery_seconds === null || r.delivery_seconds === undefined ? null : Number(r.delivery_seconds),
  active: toBool(r.active),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

const toRow = (s: Partial<NewService>) => ({
  ...(s.agentAddress !== undefined ? { agent_address: s.agentAddress } : {}),
  ...(s.name !== undefined ? { name: s.name } : {}),
  ...(s.description !== undefined ? { description: s.description } : {}),
  ...(s.priceRaw !== undefined ? { price_raw: s.priceRaw } : {}),
  ...(s.token !== undefined ? { token: s.token } : {}),
  ...(s.capabilities !== undefined ? { capabilities: JSON.stringify(s.capabilities) } : {}),
  ...(s.deliverySeconds !== undefined ? { delivery_seconds: s.deliverySeconds } : {}),
  ...(s.active !== undefined ? { active: s.active } : {}),
  ...(s.createdAt !== undefined ? { created_at: s.createdAt } : {}),
  ...(s.updatedAt !== undefined ? { updated_at: s.updatedAt } : {}),
});

export async function insertService(db: Queryable, service: NewService): Promise<ServiceRecord> {
  const [row] = await db("services").insert(toRow(service)).returning("id");
  const id = typeof row === "object" ? Number((row as { id: number }).id) : Number(row);
  return (await findService(db, id))!;
}

export async function findService(db: Queryable, id: number): Promise<ServiceRecord | undefined> {
  const row = await db("services").where({ id }).first();
  return row ? fromRow(row) : undefined;
}

export async function updateService(db: Queryable, id: number, changes: Partial<NewService>): Promise<void> {
  await db("services").where({ id }).update(toRow(changes));
}

/** Services, newest first: active ones unless `status` says otherwise, optionally of one agent. */
export async function listActiveServices(
  db: Queryable,
  filter: { agent?: string; status?: "active" | "inactive" | "all"; limit: number; offset: number },
): Promise<{ services: ServiceRecord[]; total: number }> {
  const status = filter.status ?? "active";
  const base = () => {
    const q = db("services");
    if (status !== "all") q.where({ active: status === "active" });
    if (filter.agent) q.where({ agent_address: filter.agent.toLowerCase() });
    return q;
  };
  const rows = await base().orderBy("id", "desc").limit(filter.limit).offset(filter.offset).select("*");
  const count = (await base().count({ n: "*" }).first()) as { n?: number | string } | undefined;
  return { services: rows.map(fromRow), total: Number(count?.n ?? 0) };
}
