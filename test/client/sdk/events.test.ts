/**
 * The SDK's event stream client against the push contract (a local stand-in server speaking it, since the real
 * endpoint is built in another branch) and against the real API, which has no stream here (404).
 */
import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi } from "../../helpers/api";
import { startSseStub, type SseStub } from "../../helpers/sseStub";
import { ApiError, MarketApi, SseParser, subscribe, type MarketEvent } from "../../../client/sdk/index";

const until = async (what: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("SDK event stream", () => {
  describe("SseParser", () => {
    it("parses events split anywhere, with CRLF, comments, several data lines and ids", () => {
      const text =
        ': keep-alive\r\n\r\nid: 7\r\nevent: task.open\r\ndata: {"a":1}\r\n\r\n' +
        'id: 8\nevent: task.verdict\ndata: {"b":\ndata: 2}\n\nretry: 10\n\n';
      for (let cut = 0; cut <= text.length; cut++) {
        const parser = new SseParser();
        const events = [...parser.feed(text.slice(0, cut)), ...parser.feed(text.slice(cut))];
        expect(events, `cut at ${cut}`).to.deep.equal([
          { id: "7", event: "task.open", data: '{"a":1}' },
          { id: "8", event: "task.verdict", data: '{"b":\n2}' },
        ]);
      }
    });
  });

  describe("subscribe", () => {
    let stub: SseStub;
    beforeEach(async () => {
      stub = await startSseStub();
    });
    afterEach(async () => {
      await stub.close();
    });

    it("delivers events in order with the key, and resumes with Last-Event-ID after a disconnect", async () => {
      const api = new MarketApi({ baseUrl: stub.url, apiKey: "sk_" + "ab".repeat(32) });
      const got: MarketEvent[] = [];
      const sub = subscribe(api, (e) => void got.push(e), { initialDelayMs: 50 });
      try {
        await until(() => stub.openStreams() === 1);
        stub.emit("task.open", { taskHash: "0x01", role: "executor" });
        stub.emit("task.assigned", { taskHash: "0x01", role: "worker" });
        await until(() => got.length === 2);
        stub.dropConnections();
        stub.emit("task.settled", { taskHash: "0x01", role: "worker", outcome: "paid" }); // while disconnected
        await until(() => got.length === 3);
        expect(got.map((e) => [e.id, e.type])).to.deep.equal([
          ["1", "task.open"],
          ["2", "task.assigned"],
          ["3", "task.settled"],
        ]);
        expect(got[2].data.outcome).to.equal("paid");
        expect(sub.lastEventId).to.equal("3");
        const streams = stub.requests.filter((r) => r.path === "/api/v1/events");
        expect(streams).to.have.length(2);
        expect(streams[0].headers["x-api-key"]).to.equal(api.apiKey);
        expect(streams[0].headers["last-event-id"]).to.equal(undefined);
        expect(streams[1].headers["last-event-id"]).to.equal("2");
      } finally {
        await sub.close();
      }
    });

    it("backs off after failures (growing delays) and waits Retry-After on 429", async () => {
      const api = new MarketApi({ baseUrl: stub.url });
      const delays: number[] = [];
      stub.refuseNext(3, 500);
      const sub = subscribe(api, () => undefined, { initialDelayMs: 40, onError: (_, wait) => delays.push(wait) });
      try {
        await until(() => stub.openStreams() === 1);
        expect(delays).to.have.length(3);
        // Jittered exponential back-off: attempt n waits between half and all of 40 * 2^n ms.
        delays.forEach((d, n) => expect(d).to.be.within(20 * 2 ** n, 40 * 2 ** n));
      } finally {
        await sub.close();
      }
      await until(() => stub.openStreams() === 0);
      stub.refuseNext(1, 429, { "retry-after": "1" });
      const started = Date.now();
      const rateLimited = subscribe(api, () => undefined, { initialDelayMs: 10 });
      try {
        await until(() => stub.openStreams() === 1, 5000);
        expect(Date.now() - started, "waited Retry-After").to.be.at.least(900);
      } finally {
        await rateLimited.close();
      }
    });

    it("reconnects when the connection goes silent beyond the idle timeout", async () => {
      const api = new MarketApi({ baseUrl: stub.url });
      const sub = subscribe(api, () => undefined, { idleTimeoutMs: 300, initialDelayMs: 20 });
      try {
        await until(() => stub.requests.filter((r) => r.path === "/api/v1/events").length >= 2, 3000);
      } finally {
        await sub.close();
      }
    });
  });

  it("ends with ApiError NOT_FOUND on a server without the stream (the runtime's cue to poll)", async () => {
    const { book } = await loadFixture(deployEscrowFixture);
    const api = await startTestApi(book);
    const older = await startSseStub({ forwardTo: api.url, noStream: true });
    try {
      const market = new MarketApi({ baseUrl: older.url, apiKey: await api.createKey("0x" + "12".repeat(20)) });
      const sub = subscribe(market, () => undefined);
      let error: unknown;
      await sub.done.catch((e) => (error = e));
      expect(error).to.be.instanceOf(ApiError);
      expect((error as ApiError).code).to.equal("NOT_FOUND");
      expect((error as ApiError).status).to.equal(404);
    } finally {
      await older.close();
      await api.close();
    }
  });
});
