/**
 * Rent-an-agent services over HTTP: an agent's CRUD with every refusal, the public reads, the agent card's skills,
 * and a rental from listing to payment: every SERVICE_* code and UNDERPAID, the pinned task hidden from the public
 * list and offered to its target, another agent refused NOT_TARGET_EXECUTOR.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { STATUS, USDC } from "../../helpers/fixtures";
import { INDEX, withMarket } from "../../helpers/market";
import type { ApiResponse } from "../../helpers/api";

const SERVICES = "/api/v1/marketplace/services";

function expectError(res: ApiResponse, status: number, code: string, message?: RegExp) {
  expect(res.status, res.text).to.equal(status);
  expect(res.json.error.code, res.text).to.equal(code);
  if (message) expect(res.json.error.message).to.match(message);
}

const body = (overrides: Record<string, unknown> = {}) => ({
  name: "Translate a page",
  description: "English to French, one page, within a day",
  price_raw: 30_000_000,
  capabilities: ["Translation", "french"],
  delivery_time_seconds: 86_400,
  ...overrides,
});

describe("Services (rent-an-agent)", () => {
  it("lets a registered agent list, change and deactivate its services; anyone reads the active ones", () =>
    withMarket(async (m) => {
      const agent = await m.newAgent();
      const created = await m.api.request("POST", SERVICES, { key: agent.key, body: body() });
      expect(created.status, created.text).to.equal(201);
      const service = created.json.data;
      expect(service).to.deep.include({
        name: "Translate a page",
        price_raw: 30_000_000,
        agent_address: agent.address,
        agent_public_key: agent.publicKey,
        token: m.token.toLowerCase(),
        capabilities: ["french", "translation"],
        delivery_time_seconds: 86_400,
        active: true,
      });
      expect(service.id).to.be.a("number");

      const list = await m.api.request("GET", SERVICES);
      expect(list.json.data.total).to.equal(1);
      expect(list.json.data.services[0]).to.deep.equal(service);
      expect((await m.api.request("GET", `${SERVICES}/${service.id}`)).json.data).to.deep.equal(service);
      expect((await m.api.request("GET", `${SERVICES}?agent=${agent.address}`)).json.data.total).to.equal(1);
      // The spec's fields, then pages: newest first, limit and offset.
      expect(service).to.include.keys(["id", "name", "description", "price_raw", "agent_address", "agent_public_key"]);
      expect(Object.keys(list.json.data)).to.have.members(["services", "total"]);
      const second = (await m.api.request("POST", SERVICES, { key: agent.key, body: body({ name: "Proofread" }) })).json
        .data;
      const page = async (q: string) => (await m.api.request("GET", `${SERVICES}?${q}`)).json.data;
      expect((await page("limit=1")).services.map((x: { id: number }) => x.id)).to.deep.equal([second.id]);
      expect(await page("limit=1&offset=1")).to.deep.equal({ services: [service], total: 2 });
      await m.api.request("DELETE", `${SERVICES}/${second.id}`, { key: agent.key });
      expect(
        (await m.api.request("GET", `${SERVICES}?agent=${ethers.Wallet.createRandom().address}`)).json.data.total,
      ).to.equal(0);

      const other = await m.newAgent();
      expectError(
        await m.api.request("PATCH", `${SERVICES}/${service.id}`, { key: other.key, body: { price_raw: 1 } }),
        403,
        "FORBIDDEN",
      );
      expectError(await m.api.request("DELETE", `${SERVICES}/${service.id}`, { key: other.key }), 403, "FORBIDDEN");
      const changed = await m.api.request("PATCH", `${SERVICES}/${service.id}`, {
        key: agent.key,
        body: { price_raw: "35000000" },
      });
      expect(changed.status, changed.text).to.equal(200);
      expect(changed.json.data.price_raw).to.equal(35_000_000);

      const removed = await m.api.request("DELETE", `${SERVICES}/${service.id}`, { key: agent.key });
      expect(removed.json.data.active).to.equal(false);
      expect((await m.api.request("GET", SERVICES)).json.data.total).to.equal(0);
      expect((await m.api.request("GET", `${SERVICES}/${service.id}`)).json.data.active).to.equal(false);

      // Its agent finds the deactivated service (status=inactive or all) and lists it again (PATCH active: true).
      const byStatus = async (status: string) =>
        (await m.api.request("GET", `${SERVICES}?agent=${agent.address}&status=${status}`)).json.data;
      expect((await byStatus("inactive")).services.map((s: { id: number }) => s.id)).to.have.members([
        service.id,
        second.id,
      ]);
      expect((await byStatus("all")).total).to.equal(2);
      expect((await byStatus("active")).total).to.equal(0);
      expectError(
        await m.api.request("PATCH", `${SERVICES}/${service.id}`, { key: other.key, body: { active: true } }),
        403,
        "FORBIDDEN",
      );
      const relisted = await m.api.request("PATCH", `${SERVICES}/${service.id}`, {
        key: agent.key,
        body: { active: true },
      });
      expect(relisted.status, relisted.text).to.equal(200);
      expect(relisted.json.data).to.include({ id: service.id, active: true, price_raw: 35_000_000 });
      expect((await m.api.request("GET", SERVICES)).json.data.services.map((s: { id: number }) => s.id)).to.deep.equal([
        service.id,
      ]);
      expect((await byStatus("inactive")).services.map((s: { id: number }) => s.id)).to.deep.equal([second.id]);
      expectError(await m.api.request("GET", `${SERVICES}?status=deleted`), 400, "VALIDATION_ERROR", /^query\.status/);
    }));

  it("refuses bad input naming the field, strangers, and unknown or malformed ids", () =>
    withMarket(async (m) => {
      const agent = await m.newAgent();
      const post = (b: unknown) => m.api.request("POST", SERVICES, { key: agent.key, body: b });
      for (const [overrides, field] of [
        [{ price_raw: 0 }, "body.price_raw"],
        [{ price_raw: 1.5 }, "body.price_raw"],
        [{ price_raw: "-3" }, "body.price_raw"],
        [{ price_raw: 2 ** 53 }, "body.price_raw"],
        [{ name: " " }, "body.name"],
        [{ description: "x".repeat(2001) }, "body.description"],
        [{ delivery_time_seconds: 5 }, "body.delivery_time_seconds"],
        [{ surprise: true }, "body"],
      ] as const) {
        const res = await post(body(overrides));
        expectError(res, 400, "VALIDATION_ERROR", new RegExp(`^${field.replace(".", "\\.")}`));
      }
      const stranger = await m.api.createKey(ethers.Wallet.createRandom().address);
      expectError(await m.api.request("POST", SERVICES, { key: stranger, body: body() }), 403, "NOT_REGISTERED");
      // An executor record without a public key (registered before keys were required) cannot sell.
      const keyless = await m.newAgent({ publicKey: "" });
      expectError(await m.api.request("POST", SERVICES, { key: keyless.key, body: body() }), 400, "NO_PUBKEY");
      expectError(await m.api.request("POST", SERVICES, { body: body() }), 401, "UNAUTHORIZED");
      expectError(await m.api.request("GET", `${SERVICES}/abc`), 400, "VALIDATION_ERROR", /^path\.id/);
      expectError(await m.api.request("GET", `${SERVICES}/999`), 404, "NOT_FOUND");
      expectError(await m.api.request("GET", `${SERVICES}?limit=51`), 400, "VALIDATION_ERROR", /^query\.limit/);
      expectError(await m.api.request("PATCH", `${SERVICES}/1`, { key: agent.key, body: {} }), 400, "VALIDATION_ERROR");
    }));

  it("lists an agent's active services as its card's skills", () =>
    withMarket(async (m) => {
      const agent = await m.newAgent();
      const service = (await m.api.request("POST", SERVICES, { key: agent.key, body: body() })).json.data;
      const card = (await m.api.request("GET", `/.well-known/agents/${agent.address}.json`)).json;
      expect(card.skills).to.deep.equal([
        { id: String(service.id), name: service.name, description: service.description, price_raw: 30_000_000 },
      ]);
      expect(card.blindmarket.invoke.api.body).to.deep.equal({ targetExecutor: agent.address, serviceId: service.id });
    }));

  it("rents a service: every rental check, the pinned task offered to its target only, delivered and paid", () =>
    withMarket(async (m) => {
      const seller = await m.newAgent();
      const other = await m.newAgent();
      const service = (await m.api.request("POST", SERVICES, { key: seller.key, body: body() })).json.data;
      const index = async (amount: bigint, terms: Record<string, unknown>) => {
        const { taskHash } = await m.list({}, { amount, unlisted: true });
        const funded = await m.escrow.queryFilter(m.escrow.filters.TaskCreated(), -1);
        const txHash = funded[funded.length - 1].transactionHash;
        return {
          taskHash,
          res: await m.api.request("POST", INDEX, {
            key: m.posterKey,
            body: { txHash, taskHash, privacy: "public", ...terms },
          }),
        };
      };
      expectError((await index(USDC(30), { serviceId: service.id })).res, 400, "SERVICE_NO_TARGET");
      expectError(
        (await index(USDC(29), { targetExecutor: seller.address, serviceId: service.id })).res,
        409,
        "UNDERPAID",
        /costs 30000000/,
      );
      expectError(
        (await index(USDC(30), { targetExecutor: other.address, serviceId: service.id })).res,
        409,
        "SERVICE_AGENT_MISMATCH",
      );
      expectError(
        (await index(USDC(30), { targetExecutor: seller.address, serviceId: 999 })).res,
        409,
        "SERVICE_NOT_ACTIVE",
      );
      const retired = (await m.api.request("POST", SERVICES, { key: seller.key, body: body({ name: "Old" }) })).json
        .data;
      await m.api.request("DELETE", `${SERVICES}/${retired.id}`, { key: seller.key });
      expectError(
        (await index(USDC(30), { targetExecutor: seller.address, serviceId: retired.id })).res,
        409,
        "SERVICE_NOT_ACTIVE",
      );
      // A settlement token changed since the service was listed.
      await m.api.deps
        .db("services")
        .where({ id: service.id })
        .update({ token: ethers.Wallet.createRandom().address.toLowerCase() });
      expectError(
        (await index(USDC(30), { targetExecutor: seller.address, serviceId: service.id })).res,
        409,
        "SERVICE_TOKEN_MISMATCH",
      );
      await m.api.deps.db("services").where({ id: service.id }).update({ token: m.token.toLowerCase() });

      const rental = await index(USDC(31), { targetExecutor: seller.address, serviceId: service.id });
      expect(rental.res.status, rental.res.text).to.equal(200);
      await m.api.synced();
      // Not in the public list; offered to the seller only.
      const open = (await m.api.request("GET", "/api/v1/a2a/tasks")).json.data;
      expect(open.tasks.map((t: { meta: { taskHash: string } }) => t.meta.taskHash)).not.to.include(rental.taskHash);
      const offered = await m.api.request("GET", "/api/v1/a2a/tasks/offered", { key: seller.key });
      expect(offered.json.data.tasks.map((t: { meta: { taskHash: string } }) => t.meta.taskHash)).to.deep.equal([
        rental.taskHash,
      ]);
      expect(offered.json.data.tasks[0].meta).to.include({ targetExecutor: seller.address, serviceId: service.id });
      expect(
        (await m.api.request("GET", "/api/v1/a2a/tasks/offered", { key: other.key })).json.data.tasks,
      ).to.deep.equal([]);
      // The recorded terms stay when the service changes afterwards.
      await m.api.request("PATCH", `${SERVICES}/${service.id}`, { key: seller.key, body: { price_raw: 90_000_000 } });
      const terms = (await m.api.deps.db("listings").where({ task_hash: rental.taskHash }).first()).service_terms;
      expect(JSON.parse(terms)).to.include({ serviceId: service.id, priceRaw: "30000000", agent: seller.address });

      const accept = (key: string) => m.api.request("POST", `/api/v1/a2a/tasks/${rental.taskHash}/accept`, { key });
      // Another agent's bid is recorded but opens no offer window: the target accepts at once.
      const bid = await m.post(`/api/v1/a2a/tasks/${rental.taskHash}/bid`, other.key, { message: "me too" });
      expect(bid.status, bid.text).to.equal(200);
      expect(bid.json.data.offer).to.equal(null);
      expectError(await accept(other.key), 403, "NOT_TARGET_EXECUTOR");
      const accepted = await accept(seller.key);
      expect(accepted.status, accepted.text).to.equal(200);
      await m.api.synced();
      const sellerWallet = new ethers.Wallet(seller.privateKey, ethers.provider);
      await (await m.admin.sendTransaction({ to: sellerWallet.address, value: ethers.parseEther("1") })).wait();
      const submitted = await m.api.request("POST", `/api/v1/a2a/tasks/${rental.taskHash}/submit`, {
        key: seller.key,
        body: { result: { text: "bonjour" } },
      });
      expect(submitted.status, submitted.text).to.equal(200);
      await (
        await sellerWallet.sendTransaction({
          to: submitted.json.data.unsignedTx.to,
          data: submitted.json.data.unsignedTx.data,
        })
      ).wait();
      await m.api.synced();
      const before = await m.usdc.balanceOf(seller.address);
      const finalized = await m.api.request("POST", `/api/v1/a2a/tasks/${rental.taskHash}/finalize`, {
        key: m.posterKey,
      });
      expect(finalized.status, finalized.text).to.equal(200);
      for (let i = 0; i < 100 && (await m.usdc.balanceOf(seller.address)) === before; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect((await m.usdc.balanceOf(seller.address)) - before).to.equal(USDC(31) - (USDC(31) * 1000n) / 10_000n);
    }));

  it("lets the poster cancel a rental its target has not accepted (no waiting time), as any funded task", () =>
    withMarket(async (m) => {
      const seller = await m.newAgent();
      const service = (await m.api.request("POST", SERVICES, { key: seller.key, body: body() })).json.data;
      const { taskHash, taskId } = await m.list(
        { targetExecutor: seller.address, serviceId: service.id },
        { amount: USDC(30) },
      );
      const before = await m.usdc.balanceOf(m.poster.address);
      await m.send(m.poster, await m.post(`/api/v1/a2a/tasks/${taskHash}/cancel`, m.posterKey));
      expect(Number((await m.escrow.getTask(taskId)).status)).to.equal(STATUS.Cancelled);
      expect((await m.usdc.balanceOf(m.poster.address)) - before).to.equal(USDC(30));
      expectError(await m.post(`/api/v1/a2a/tasks/${taskHash}/accept`, seller.key), 409, "TASK_CANCELLED");
      const offered = await m.api.request("GET", "/api/v1/a2a/tasks/offered", { key: seller.key });
      expect(offered.json.data.tasks).to.deep.equal([]);

      // A task pinned without a service is offered the same way, and counted nowhere public.
      const pinned = await m.list({ targetExecutor: seller.address });
      const mine = await m.api.request("GET", "/api/v1/a2a/tasks/offered", { key: seller.key });
      expect(mine.json.data.tasks.map((t: { meta: { taskHash: string } }) => t.meta.taskHash)).to.deep.equal([
        pinned.taskHash,
      ]);
      expect((await m.api.request("GET", "/api/v1/a2a/tasks")).json.data.total).to.equal(0);
      expect((await m.api.request("GET", "/api/v1/stats")).json.data.openTasks).to.equal(0);
    }));
});
