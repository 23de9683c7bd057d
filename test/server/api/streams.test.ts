/**
 * The rules every long-lived response shares (docs/api.md, "Events"), over HTTP: event streams, hosted agents' log
 * follows and MCP GET streams are capped per API key, per wallet (however many keys it mints) and per client address;
 * a wallet's active keys are capped; a stream ends at its maximum lifetime (an MCP stream at the idle timeout), and
 * when its key is revoked, whether through this process or by another one sharing the database; each item of an MCP
 * JSON-RPC batch counts against the per-IP window.
 */
import { expect } from "chai";
import { withMarket } from "../../helpers/market";
import { openEvents, type SseStream } from "../../helpers/sse";
import { revokeKey } from "../../../server/db/repositories/apiKeys";

const KEYS = "/api/v1/api-keys";

/** Whether `stream` was ended by the server within `ms`. */
async function endsWithin(stream: SseStream, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const ended = await Promise.race([stream.ended.then(() => true), timeout]);
  clearTimeout(timer);
  return ended;
}

describe("Streams: caps, lifetime and revocation", function () {
  this.timeout(120_000);

  it("caps event streams per wallet across the keys it mints, and per client address", () =>
    withMarket(
      async (m) => {
        const open: SseStream[] = [];
        try {
          const keys = [m.posterKey, await m.api.createKey(m.poster.address), await m.api.createKey(m.poster.address)];
          for (const key of keys.slice(0, 2)) {
            for (let i = 0; i < 2; i++) {
              const s = await openEvents(m.api.url, { key });
              expect(s.status).to.equal(200);
              open.push(s);
            }
          }
          // A fresh key of the same wallet: the wallet's 4 streams are its cap.
          const minted = await openEvents(m.api.url, { key: keys[2] });
          expect(minted.status).to.equal(429);
          expect(minted.json.error.code).to.equal("RATE_LIMIT");
          expect(minted.json.error.message).to.include("at most 4 concurrent event streams per wallet");
          // Another wallet from the same address: one more fits (5 per address), then the address is full.
          const other = await m.api.createKey(m.worker.address);
          const fifth = await openEvents(m.api.url, { key: other });
          expect(fifth.status).to.equal(200);
          open.push(fifth);
          const sixth = await openEvents(m.api.url, { key: other });
          expect(sixth.status).to.equal(429);
          expect(sixth.json.error.message).to.include("at most 5 concurrent event streams per client address");
        } finally {
          for (const s of open) s.close();
        }
      },
      { EVENTS_MAX_STREAMS_PER_KEY: "2", EVENTS_MAX_STREAMS_PER_WALLET: "4", EVENTS_MAX_STREAMS_PER_IP: "5" },
    ));

  it("caps a wallet's active API keys (KEY_LIMIT); revoking one makes room", () =>
    withMarket(
      async (m) => {
        // The market's poster key is the first; two more reach the cap of 3.
        for (let i = 0; i < 2; i++) {
          const made = await m.api.request("POST", KEYS, { key: m.posterKey, body: {} });
          expect(made.status, made.text).to.equal(201);
        }
        const refused = await m.api.request("POST", KEYS, { key: m.posterKey, body: {} });
        expect(refused.status).to.equal(409);
        expect(refused.json.error.code).to.equal("KEY_LIMIT");
        expect(refused.json.error.message).to.include("at most 3 active API keys");
        const listed = (await m.api.request("GET", KEYS, { key: m.posterKey })).json.data.keys as { id: number }[];
        const revoked = await m.api.request("DELETE", `${KEYS}/${listed[listed.length - 1].id}`, { key: m.posterKey });
        expect(revoked.status).to.equal(200);
        expect((await m.api.request("POST", KEYS, { key: m.posterKey, body: {} })).status).to.equal(201);
      },
      { API_MAX_KEYS_PER_WALLET: "3" },
    ));

  it("ends a key's open streams when it is revoked, here or by another process sharing the database", () =>
    withMarket(
      async (m) => {
        const made = await m.api.request("POST", KEYS, { key: m.posterKey, body: { label: "streaming" } });
        const { id, key } = made.json.data as { id: number; key: string };
        const here = await openEvents(m.api.url, { key });
        expect(here.status).to.equal(200);
        expect((await m.api.request("DELETE", `${KEYS}/${id}`, { key: m.posterKey })).status).to.equal(200);
        expect(await endsWithin(here, 5_000)).to.equal(true);

        // Another process revokes: only the shared database says so.
        const second = await m.api.request("POST", KEYS, { key: m.posterKey, body: { label: "elsewhere" } });
        const other = second.json.data as { id: number; key: string };
        const stream = await openEvents(m.api.url, { key: other.key });
        expect(stream.status).to.equal(200);
        const kept = await openEvents(m.api.url, { key: m.posterKey });
        await revokeKey(m.api.deps.db, m.poster.address.toLowerCase(), other.id, Math.floor(Date.now() / 1000));
        expect(await endsWithin(stream, 5_000)).to.equal(true);
        // Streams of the wallet's other keys go on.
        expect(await endsWithin(kept, 300)).to.equal(false);
        kept.close();
      },
      { EVENTS_CREDENTIAL_CHECK_MS: "100" },
    ));

  it("ends a stream at its maximum lifetime (EVENTS_MAX_STREAM_LIFETIME_MS)", () =>
    withMarket(
      async (m) => {
        const stream = await openEvents(m.api.url, { key: m.posterKey });
        expect(stream.status).to.equal(200);
        expect(await endsWithin(stream, 5_000)).to.equal(true);
        // The slot was freed: a new stream opens (and resumes with Last-Event-ID).
        const again = await openEvents(m.api.url, { key: m.posterKey });
        expect(again.status).to.equal(200);
        again.close();
      },
      { EVENTS_MAX_STREAM_LIFETIME_MS: "1000", EVENTS_MAX_STREAMS_PER_KEY: "1" },
    ));

  it("caps GET /mcp streams like event streams and ends them at the idle timeout", () =>
    withMarket(
      async (m) => {
        const one = await openEvents(m.api.url, { key: m.posterKey, path: "/mcp" });
        const two = await openEvents(m.api.url, { key: m.posterKey, path: "/mcp" });
        expect([one.status, two.status]).to.deep.equal([200, 200]);
        const three = await openEvents(m.api.url, { key: m.posterKey, path: "/mcp" });
        expect(three.status).to.equal(429);
        expect(three.json.error.code).to.equal("RATE_LIMIT");
        expect(three.json.error.message).to.include("MCP streams per API key");
        // A fresh key of the same wallet does not escape the wallet's cap.
        const minted = await openEvents(m.api.url, { key: await m.api.createKey(m.poster.address), path: "/mcp" });
        expect(minted.status).to.equal(429);
        expect(await endsWithin(one, 10_000)).to.equal(true);
        expect(await endsWithin(two, 10_000)).to.equal(true);
      },
      { EVENTS_MAX_STREAMS_PER_KEY: "2", EVENTS_MAX_STREAMS_PER_WALLET: "2", API_IDLE_TIMEOUT_MS: "1500" },
    ));

  it("counts each item of an MCP JSON-RPC batch against the per-IP window", () =>
    withMarket(
      async (m) => {
        const batch = (n: number) =>
          m.api.request("POST", "/mcp", {
            key: m.posterKey,
            headers: { accept: "application/json, text/event-stream" },
            body: Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "tools/list" })),
          });
        const small = await batch(3);
        expect(small.status, small.text).to.equal(200);
        expect(small.json).to.have.length(3);
        // 3 counted so far; 10 more pass the window of 12.
        const big = await batch(10);
        expect(big.status, big.text).to.equal(429);
        expect(big.json.error.code).to.equal(-32000);
        expect(big.json.error.message).to.include("too many requests");
      },
      { RATE_IP_PER_WINDOW: "12", RATE_WINDOW_MS: "600000" },
    ));
});
