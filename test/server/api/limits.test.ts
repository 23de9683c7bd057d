/**
 * The spec's rate limits over HTTP ("Limits"): the fixed 60-second windows per IP (every request; posting requests
 * whose key fails authentication), the token buckets for posting with a valid key (per wallet per family, per IP
 * across posting routes), the 429 RATE_LIMIT answer with Retry-After and RateLimit-Policy, and, with Redis, one
 * budget shared by several API instances.
 *
 * Every request comes from 127.0.0.1. Fixed windows are aligned to multiples of their length (a 60-second window is a
 * clock minute), so a test that needs N requests in one window first moves on, when the current window is nearly
 * over, to the next one. Buckets refill continuously (120 a minute is 2 a second), so counts that span several
 * requests are asserted with the refill of the measured elapsed time as the tolerance.
 *
 * In memory the limits count on the service's wall clock, which the tests move (`advanceWall`) instead of sleeping.
 * In Redis they count on the Redis server's clock, a real external process the tests cannot move: there they wait.
 *
 * With REDIS_URL set every API of this file counts in Redis, under a key prefix of its own (RATE_LIMIT_PREFIX), so
 * runs and tests never share counters unless a test means them to.
 */
import crypto from "node:crypto";
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture, DAY } from "../../helpers/fixtures";
import { startTestApi, type ApiResponse, type TestApi } from "../../helpers/api";
import { findActiveKeyByHash, insertApiKey, revokeKey } from "../../../server/db/repositories/apiKeys";
import { hashSecret, newApiKey } from "../../../server/domain/credentials";
import type { AddressBook } from "../../../server/chain/addressBook";

const UPLOAD = "/api/v1/storage/upload";
const UPLOAD_BATCH = "/api/v1/storage/upload-batch";
const BUILD = "/api/v1/tasks";
const BUILD_BATCH = "/api/v1/tasks/batch";
const INDEX = "/api/v1/a2a/tasks/index";
const INDEX_BATCH = "/api/v1/a2a/tasks/index-batch";
const WHOAMI = "/api/v1/api-keys/whoami";
const STATS = "/api/v1/stats";

const MINUTE = 60_000;
/** Room for the bucket tests: the per-IP window must not be what refuses them. */
const NO_IP_WINDOW = { RATE_IP_PER_WINDOW: "100000" };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const random32 = () => `0x${crypto.randomBytes(32).toString("hex")}`;
const randomWallet = () => ethers.Wallet.createRandom().address;
let counter = 0;
const unique = (tag: string) =>
  `${tag} ${process.pid} ${Date.now()} ${++counter} ${crypto.randomBytes(4).toString("hex")}`;
const b64 = (text: string) => Buffer.from(text).toString("base64");

/** A key prefix no other test or run uses. */
const freshPrefix = () => `test:limits:${crypto.randomBytes(6).toString("hex")}:`;

/** The limits' time now: the service's wall clock in memory, the machine's (as close as it gets to Redis's) in Redis. */
const limitsNow = (api: TestApi) => (api.deps.config.api.redisUrl ? Date.now() : api.clock.wallNowMs());

/** Lets `ms` of the limits' time pass: the service's clock moves in memory; with Redis (its server's clock) we wait. */
async function pass(api: TestApi, ms: number): Promise<void> {
  if (api.deps.config.api.redisUrl) await sleep(ms);
  else api.clock.advanceWall(ms / 1000);
}

/** Moves on, when fewer than `needMs` are left in the current fixed window of `windowMs`, to the next window. */
async function roomInWindow(api: TestApi, windowMs: number, needMs: number): Promise<void> {
  const left = windowMs - (limitsNow(api) % windowMs);
  if (left < needMs) await pass(api, left + 25);
}

async function withApi<T>(
  env: Record<string, string>,
  fn: (ctx: { api: TestApi; book: AddressBook }) => Promise<T>,
): Promise<T> {
  const { book } = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(book, { RATE_LIMIT_PREFIX: freshPrefix(), ...env });
  try {
    return await fn({ api, book });
  } finally {
    await api.close();
  }
}

function expectRateLimit(res: ApiResponse, policy: string) {
  expect(res.status, res.text).to.equal(429);
  expect(res.json.success).to.equal(false);
  expect(res.json.error.code).to.equal("RATE_LIMIT");
  expect(res.headers.get("ratelimit-policy")).to.equal(policy);
  const retryAfter = res.headers.get("retry-after");
  expect(retryAfter, "Retry-After").to.match(/^[1-9][0-9]*$/);
  expect(res.json.error.details).to.deep.equal({ retryAfterSeconds: Number(retryAfter) });
  return Number(retryAfter);
}

/** Retry-After must say the wait in whole seconds, and the message the same number. */
function expectWaitInMessage(res: ApiResponse) {
  expect(res.json.error.message).to.include(`retry in ${res.headers.get("retry-after")} s`);
}

// ---------------------------------------------------------------------------------------------------------------
// The three posting families, each with a single call and a bulk call of n items
// ---------------------------------------------------------------------------------------------------------------

interface Family {
  /** The family as the 429 message names it. */
  name: "uploads" | "task builds" | "task listings";
  /** Status of an accepted call (an index call for a transaction that does not exist fails, and still counts). */
  accepted: number;
  single(api: TestApi, key: string, book: AddressBook): Promise<ApiResponse>;
  bulk(api: TestApi, key: string, book: AddressBook, n: number): Promise<ApiResponse>;
}

const buildTerms = () => ({ taskHash: random32(), amount: "5000000", locationZone: "global", duration: String(DAY) });

const UPLOADS: Family = {
  name: "uploads",
  accepted: 201,
  single: (api, key) => api.request("POST", UPLOAD, { key, body: { data: b64(unique("brief")) } }),
  bulk: (api, key, _book, n) =>
    api.request("POST", UPLOAD_BATCH, {
      key,
      body: { items: Array.from({ length: n }, () => ({ data: b64(unique("brief")) })) },
    }),
};

const BUILDS: Family = {
  name: "task builds",
  accepted: 200,
  single: (api, key) => api.request("POST", BUILD, { key, body: buildTerms() }),
  bulk: (api, key, book, n) =>
    api.request("POST", BUILD_BATCH, {
      key,
      body: { token: book.token.address, tasks: Array.from({ length: n }, buildTerms) },
    }),
};

/** Index calls for transactions that were never sent: valid bodies, answered 404 RECEIPT_NOT_FOUND by the domain. */
const LISTINGS: Family = {
  name: "task listings",
  accepted: 404,
  single: (api, key) => api.request("POST", INDEX, { key, body: { txHash: random32(), taskHash: random32() } }),
  bulk: (api, key, _book, n) =>
    api.request("POST", INDEX_BATCH, {
      key,
      body: { txHash: random32(), tasks: Array.from({ length: n }, () => ({ taskHash: random32() })) },
    }),
};

function expectAccepted(family: Family, res: ApiResponse) {
  expect(res.status, res.text).to.equal(family.accepted);
  if (family === LISTINGS) expect(res.json.error.code).to.equal("RECEIPT_NOT_FOUND");
}

/**
 * Single calls until one is refused (at most `max`); the accepted count and the refusal. Each accepted call is
 * checked to be an ordinary answer of the family.
 */
async function singlesUntilRefused(family: Family, call: () => Promise<ApiResponse>, max: number) {
  for (let accepted = 0; accepted < max; accepted++) {
    const res = await call();
    if (res.status === 429) return { accepted, refusal: res };
    expectAccepted(family, res);
  }
  throw new Error(`${family.name}: no refusal after ${max} calls`);
}

describe("API limits", () => {
  describe("per IP, fixed window (100 requests a minute)", () => {
    it("refuses the 101st request of a window with 429 RATE_LIMIT, Retry-After and RateLimit-Policy 100;w=60", () =>
      withApi({}, async ({ api }) => {
        await roomInWindow(api, MINUTE, 25_000);
        // Every request counts, whatever the route or the outcome (here a public read and an unknown route).
        for (let i = 0; i < 100; i++) {
          const res = await api.request("GET", i % 2 === 0 ? STATS : "/api/v1/no-such-route");
          expect(res.status, `request ${i + 1}`).to.equal(i % 2 === 0 ? 200 : 404);
          expect(res.headers.get("ratelimit-policy")).to.equal("100;w=60");
        }
        const over = await api.request("GET", STATS);
        const retryAfter = expectRateLimit(over, "100;w=60");
        expect(retryAfter).to.be.within(1, 60);
        // The generic message: it names no family and no limit, only the wait.
        expect(over.json.error.message).to.match(/^too many requests\b/);
        expect(over.json.error.message).not.to.match(/uploads|builds|listings|100/);
        expectWaitInMessage(over);
        // Any route, authenticated or not, is refused for the rest of the window.
        expectRateLimit(await api.request("POST", UPLOAD, { body: { data: b64("x") } }), "100;w=60");
      }));

    it("admits requests again when the window resets (RATE_WINDOW_MS 3 s, 5 a window)", () =>
      withApi({ RATE_WINDOW_MS: "3000", RATE_IP_PER_WINDOW: "5" }, async ({ api }) => {
        await roomInWindow(api, 3000, 1500);
        for (let i = 0; i < 5; i++) expect((await api.request("GET", STATS)).status).to.equal(200);
        const over = await api.request("GET", STATS);
        const retryAfter = expectRateLimit(over, "5;w=3");
        expect(retryAfter).to.be.within(1, 3);

        await pass(api, retryAfter * 1000);
        const again = await api.request("GET", STATS);
        expect(again.status, again.text).to.equal(200);
        for (let i = 0; i < 4; i++) expect((await api.request("GET", STATS)).status).to.equal(200);
        expectRateLimit(await api.request("GET", STATS), "5;w=3");
      }));

    it("counts Retry-After down to the end of the window, not a whole window from the first request", () =>
      withApi({ RATE_WINDOW_MS: "4000", RATE_IP_PER_WINDOW: "2" }, async ({ api }) => {
        // Start 1.5 to 2.5 s into a window: the first request is not at the window's start.
        const offset = limitsNow(api) % 4000;
        if (offset < 1500) await pass(api, 1500 - offset);
        else if (offset > 2500) await pass(api, 4000 - offset + 1500);
        const windowEnd = Math.floor(limitsNow(api) / 4000) * 4000 + 4000;
        expect((await api.request("GET", STATS)).status).to.equal(200);
        expect((await api.request("GET", STATS)).status).to.equal(200);
        const sent = limitsNow(api);
        const over = await api.request("GET", STATS);
        const received = limitsNow(api);
        expect(received).to.be.below(windowEnd, "the test's requests fit one window");
        const retryAfter = expectRateLimit(over, "2;w=4");
        expect(retryAfter).to.be.within(Math.ceil((windowEnd - received) / 1000), Math.ceil((windowEnd - sent) / 1000));
      }));
  });

  describe("per IP, posting with a key that fails authentication (100 a minute)", () => {
    it("answers 100 failed posting requests 401, then 429 with RateLimit-Policy 100;w=60, also for a valid key", () =>
      withApi(NO_IP_WINDOW, async ({ api, book }) => {
        const wallet = randomWallet();
        const valid = await api.createKey(wallet);
        const revoked = await api.createKey(randomWallet());
        const row = await findActiveKeyByHash(api.testDb.db, hashSecret(revoked));
        expect(await revokeKey(api.testDb.db, row!.address, row!.id, Math.floor(Date.now() / 1000))).to.equal(true);
        const unknown = newApiKey().key;

        await roomInWindow(api, MINUTE, 25_000);
        // Failed authentication outside the posting routes does not count against this budget.
        for (let i = 0; i < 5; i++) {
          expect((await api.request("GET", WHOAMI, { key: unknown })).status).to.equal(401);
        }

        const credentials: { name: string; headers: Record<string, string> }[] = [
          { name: "unknown key", headers: { "x-api-key": unknown } },
          { name: "unknown key as Bearer", headers: { authorization: `Bearer ${unknown}` } },
          { name: "revoked key", headers: { "x-api-key": revoked } },
          { name: "malformed key", headers: { "x-api-key": "sk_not-a-key" } },
          { name: "no key", headers: {} },
        ];
        const routes: { path: string; body: () => unknown }[] = [
          { path: UPLOAD, body: () => ({ data: b64("x") }) },
          { path: UPLOAD_BATCH, body: () => ({ items: [{ data: b64("x") }] }) },
          { path: BUILD, body: buildTerms },
          { path: BUILD_BATCH, body: () => ({ token: book.token.address, tasks: [buildTerms()] }) },
          { path: INDEX, body: () => ({ txHash: random32(), taskHash: random32() }) },
          { path: INDEX_BATCH, body: () => ({ txHash: random32(), tasks: [{ taskHash: random32() }] }) },
        ];
        for (let i = 0; i < 100; i++) {
          const credential = credentials[i % credentials.length];
          const route = routes[i % routes.length];
          const res = await api.request("POST", route.path, { headers: credential.headers, body: route.body() });
          expect(res.status, `${i + 1}: ${credential.name} on ${route.path}: ${res.text}`).to.equal(401);
          expect(res.json.error.code).to.equal("UNAUTHORIZED");
          // A posting request that authenticates does not count either.
          if (i === 49) expect((await UPLOADS.single(api, valid, book)).status).to.equal(201);
        }

        const over = await api.request("POST", UPLOAD, { key: unknown, body: { data: b64("x") } });
        expect(expectRateLimit(over, "100;w=60")).to.be.within(1, 60);
        expect(over.json.error.message).to.match(/^too many .*requests\b/);
        expectWaitInMessage(over);

        // The budget is checked before authenticating: a valid key from this address is refused too, on every
        // posting route, until the window resets.
        expectRateLimit(await UPLOADS.single(api, valid, book), "100;w=60");
        expectRateLimit(await BUILDS.bulk(api, valid, book, 2), "100;w=60");
        expectRateLimit(await LISTINGS.single(api, valid, book), "100;w=60");

        // Reads and key management are not posting: they still answer.
        const whoami = await api.request("GET", WHOAMI, { key: valid });
        expect(whoami.status, whoami.text).to.equal(200);
        expect(whoami.json.data.address).to.equal(wallet.toLowerCase());
        expect((await api.request("GET", WHOAMI, { key: unknown })).status).to.equal(401);
        expect((await api.request("GET", STATS)).status).to.equal(200);
      }));

    it("admits posting again when the window resets (RATE_WINDOW_MS 3 s, 3 failures a window)", () =>
      withApi({ ...NO_IP_WINDOW, RATE_WINDOW_MS: "3000", RATE_FAILED_AUTH_PER_WINDOW: "3" }, async ({ api, book }) => {
        const valid = await api.createKey(randomWallet());
        const unknown = newApiKey().key;
        await roomInWindow(api, 3000, 1500);
        for (let i = 0; i < 3; i++) expect((await UPLOADS.single(api, unknown, book)).status).to.equal(401);
        const retryAfter = expectRateLimit(await UPLOADS.single(api, valid, book), "3;w=3");
        expect(retryAfter).to.be.within(1, 3);

        await pass(api, retryAfter * 1000);
        expect((await UPLOADS.single(api, valid, book)).status).to.equal(201);
        expect((await UPLOADS.single(api, unknown, book)).status).to.equal(401);
      }));
  });

  describe("per wallet per family, token buckets (120 items a minute)", () => {
    for (const family of [UPLOADS, BUILDS, LISTINGS]) {
      it(`admits 120 ${family.name} (plus what refilled meanwhile), then refuses naming the family and the wait`, () =>
        withApi(NO_IP_WINDOW, async ({ api, book }) => {
          const key = await api.createKey(randomWallet());
          if (family === LISTINGS) {
            // The router validates the body before taking tokens: refused bodies take none.
            for (let i = 0; i < 5; i++) {
              const bad = await api.request("POST", INDEX, { key, body: { txHash: "0x1234", taskHash: random32() } });
              expect(bad.status, bad.text).to.equal(400);
              expect(bad.json.error.code).to.equal("VALIDATION_ERROR");
            }
          }
          const started = Date.now();
          expectAccepted(family, await family.bulk(api, key, book, 50));
          expectAccepted(family, await family.bulk(api, key, book, 50));
          const { accepted, refusal } = await singlesUntilRefused(family, () => family.single(api, key, book), 60);
          const elapsedSeconds = (Date.now() - started) / 1000;

          const items = 100 + accepted;
          expect(items).to.be.at.least(120);
          expect(items).to.be.at.most(120 + Math.ceil(elapsedSeconds * 2));
          // One item needs at most half a second of refill.
          expect(expectRateLimit(refusal, "120;w=60")).to.equal(1);
          expect(refusal.json.error.message).to.include(`for ${family.name} exhausted for this wallet`);
          expect(refusal.json.error.message).to.include("1 needed");
          expectWaitInMessage(refusal);
        }));
    }

    it("counts a bulk call one token per item (an upload-batch of 50 takes 50)", () =>
      withApi(NO_IP_WINDOW, async ({ api, book }) => {
        const key = await api.createKey(randomWallet());
        const started = Date.now();
        expectAccepted(UPLOADS, await UPLOADS.bulk(api, key, book, 50));
        expectAccepted(UPLOADS, await UPLOADS.bulk(api, key, book, 50));
        // 20 left (plus the refill): a third batch of 50 is refused whole and takes nothing...
        const refused = await UPLOADS.bulk(api, key, book, 50);
        const elapsed = (Date.now() - started) / 1000;
        const retryAfter = expectRateLimit(refused, "120;w=60");
        expect(refused.json.error.message).to.include("uploads exhausted for this wallet: 50 needed");
        expectWaitInMessage(refused);
        // 30 missing at 2 a second: 15 s, less what refilled meanwhile.
        expect(retryAfter).to.be.within(Math.floor(15 - elapsed), 15);
        // ...so the 20 left are still there.
        expectAccepted(UPLOADS, await UPLOADS.bulk(api, key, book, 20));
      }));

    it("keeps families apart and wallets apart", () =>
      withApi(NO_IP_WINDOW, async ({ api, book }) => {
        const key = await api.createKey(randomWallet());
        const other = await api.createKey(randomWallet());
        for (const n of [50, 50, 20]) expectAccepted(UPLOADS, await UPLOADS.bulk(api, key, book, n));
        const refused = await UPLOADS.bulk(api, key, book, 50);
        expectRateLimit(refused, "120;w=60");
        expect(refused.json.error.message).to.include("uploads");

        // The same wallet's other families are full.
        expectAccepted(BUILDS, await BUILDS.bulk(api, key, book, 50));
        expectAccepted(LISTINGS, await LISTINGS.bulk(api, key, book, 50));
        // Another wallet's uploads are full.
        expectAccepted(UPLOADS, await UPLOADS.bulk(api, other, book, 50));
        expectAccepted(UPLOADS, await UPLOADS.bulk(api, other, book, 50));
      }));

    it("refills continuously: about 2 items a second at 120 a minute", () =>
      withApi(NO_IP_WINDOW, async ({ api, book }) => {
        const key = await api.createKey(randomWallet());
        for (const n of [50, 50, 20]) expectAccepted(UPLOADS, await UPLOADS.bulk(api, key, book, n));
        const sentEmpty = limitsNow(api);
        const { refusal } = await singlesUntilRefused(UPLOADS, () => UPLOADS.single(api, key, book), 60);
        const emptied = limitsNow(api); // less than one token left from here on
        expectRateLimit(refusal, "120;w=60");

        await pass(api, 1050);
        // 50 needed, between 2 and 3 tokens back: about 24 s to wait, not a new minute and not a full bucket.
        const sent = limitsNow(api);
        const big = await UPLOADS.bulk(api, key, book, 50);
        const received = limitsNow(api);
        const retryAfter = expectRateLimit(big, "120;w=60");
        const least = (sent - emptied) / 1000; // tokens >= 2 * least
        const most = (received - sentEmpty) / 1000; // tokens < 1 + 2 * most
        expect(retryAfter).to.be.within(Math.ceil((50 - 1 - 2 * most) / 2), Math.ceil((50 - 2 * least) / 2));
        expect(big.json.error.message).to.include("50 needed");
        // The two refilled tokens are there.
        const two = await UPLOADS.bulk(api, key, book, 2);
        expect(two.status, two.text).to.equal(201);
        expect(two.json.data.results).to.have.length(2);
      }));
  });

  describe("per IP across posting routes and wallets (600 items a minute)", () => {
    it("sums every wallet's posting items from one address (lowered to 60 a minute, 20 per wallet family)", () =>
      withApi(
        { ...NO_IP_WINDOW, RATE_IP_POSTING_PER_MINUTE: "60", RATE_WALLET_FAMILY_PER_MINUTE: "20" },
        async ({ api, book }) => {
          const started = Date.now();
          // Three wallets, three families, each within its own bucket of 20: 60 items from this address.
          expectAccepted(UPLOADS, await UPLOADS.bulk(api, await api.createKey(randomWallet()), book, 20));
          expectAccepted(BUILDS, await BUILDS.bulk(api, await api.createKey(randomWallet()), book, 20));
          expectAccepted(LISTINGS, await LISTINGS.bulk(api, await api.createKey(randomWallet()), book, 20));
          // Fresh wallets, one item each, until the address's bucket refuses.
          const families = [UPLOADS, BUILDS, LISTINGS];
          const keys = await Promise.all(Array.from({ length: 30 }, () => api.createKey(randomWallet())));
          let n = 0;
          let refusal: ApiResponse | undefined;
          for (; n < keys.length; n++) {
            const family = families[n % 3];
            const res = await family.single(api, keys[n], book);
            if (res.status === 429) {
              refusal = res;
              break;
            }
            expectAccepted(family, res);
          }
          const elapsed = (Date.now() - started) / 1000;
          expect(refusal, "a refusal").to.not.equal(undefined);
          // 60 items, plus one a second of refill.
          expect(60 + n).to.be.at.most(60 + Math.ceil(elapsed));
          expect(expectRateLimit(refusal!, "60;w=60")).to.equal(1);
          expect(refusal!.json.error.message).to.match(
            /^rate limit for posting \((uploads|task builds|task listings)\) exhausted for this address/,
          );
          expectWaitInMessage(refusal!);
        },
      ));

    it("takes nothing from any bucket for a refused request", () =>
      withApi(
        { ...NO_IP_WINDOW, RATE_IP_POSTING_PER_MINUTE: "60", RATE_WALLET_FAMILY_PER_MINUTE: "30" },
        async ({ api, book }) => {
          const first = await api.createKey(randomWallet());
          const second = await api.createKey(randomWallet());
          const third = await api.createKey(randomWallet());

          // Refused by the wallet's bucket: the address's bucket keeps its 30.
          expectAccepted(UPLOADS, await UPLOADS.bulk(api, first, book, 30));
          const walletRefusal = await UPLOADS.bulk(api, first, book, 30);
          expectRateLimit(walletRefusal, "30;w=60");
          expect(walletRefusal.json.error.message).to.include("for this wallet");
          expectAccepted(UPLOADS, await UPLOADS.bulk(api, second, book, 30));

          // Refused by the address's bucket: the wallet's builds bucket keeps its 30.
          const addressRefusal = await BUILDS.bulk(api, third, book, 30);
          expectRateLimit(addressRefusal, "60;w=60");
          expect(addressRefusal.json.error.message).to.include("for this address");
          await pass(api, 2500); // the address's bucket refills 2.5 items; the wallet's would refill only 1.25
          const after = await BUILDS.bulk(api, third, book, 2);
          expect(after.status, after.text).to.equal(200);
        },
      ));
  });

  describe("with Redis (skipped when REDIS_URL is not set): several API processes share one budget", () => {
    /** Two API instances (two apps, two Redis clients, two databases) counting under one prefix. */
    async function withTwoApis<T>(
      env: Record<string, string>,
      fn: (ctx: { a: TestApi; b: TestApi; book: AddressBook }) => Promise<T>,
    ): Promise<T> {
      const { book } = await loadFixture(deployEscrowFixture);
      const shared = { RATE_LIMIT_PREFIX: freshPrefix(), ...env };
      const a = await startTestApi(book, shared);
      try {
        const b = await startTestApi(book, shared);
        try {
          expect(a.deps.limits.constructor.name).to.equal("RedisLimitStore");
          expect(a.deps.limits).not.to.equal(b.deps.limits);
          return await fn({ a, b, book });
        } finally {
          await b.close();
        }
      } finally {
        await a.close();
      }
    }

    /** The same key in both instances' databases (processes sharing one database would both see it). */
    async function sharedKey(a: TestApi, b: TestApi): Promise<string> {
      const { key, keyHash, prefix } = newApiKey();
      const row = { address: randomWallet().toLowerCase(), keyHash, prefix, label: "shared", createdAt: 0 };
      await insertApiKey(a.testDb.db, row);
      await insertApiKey(b.testDb.db, row);
      return key;
    }

    it("refuses the 101st request of a window counted over both: 60 to one, 41 to the other", function () {
      if (!process.env.REDIS_URL) this.skip();
      return withTwoApis({}, async ({ a, b }) => {
        await roomInWindow(a, MINUTE, 25_000);
        for (let i = 0; i < 60; i++) expect((await a.request("GET", STATS)).status, `A ${i + 1}`).to.equal(200);
        for (let i = 0; i < 40; i++) expect((await b.request("GET", STATS)).status, `B ${i + 1}`).to.equal(200);
        const over = await b.request("GET", STATS);
        expectRateLimit(over, "100;w=60");
        expect(over.json.error.message).to.match(/^too many requests\b/);
        expectRateLimit(await a.request("GET", STATS), "100;w=60");
      });
    });

    it("shares the failed-authentication budget: 50 failures on each, then both refuse", function () {
      if (!process.env.REDIS_URL) this.skip();
      return withTwoApis(NO_IP_WINDOW, async ({ a, b, book }) => {
        const unknown = newApiKey().key;
        await roomInWindow(a, MINUTE, 25_000);
        for (let i = 0; i < 50; i++) expect((await UPLOADS.single(a, unknown, book)).status).to.equal(401);
        for (let i = 0; i < 50; i++) expect((await UPLOADS.single(b, unknown, book)).status).to.equal(401);
        expectRateLimit(await UPLOADS.single(a, unknown, book), "100;w=60");
        expectRateLimit(await UPLOADS.single(b, unknown, book), "100;w=60");
      });
    });

    it("shares the wallet's family bucket: 100 uploads on one leave 20 on the other", function () {
      if (!process.env.REDIS_URL) this.skip();
      return withTwoApis(NO_IP_WINDOW, async ({ a, b, book }) => {
        const key = await sharedKey(a, b);
        expectAccepted(UPLOADS, await UPLOADS.bulk(a, key, book, 50));
        expectAccepted(UPLOADS, await UPLOADS.bulk(a, key, book, 50));
        const refused = await UPLOADS.bulk(b, key, book, 50);
        expectRateLimit(refused, "120;w=60");
        expect(refused.json.error.message).to.include("uploads exhausted for this wallet: 50 needed");
        expectAccepted(UPLOADS, await UPLOADS.bulk(b, key, book, 20));
      });
    });
  });
});
