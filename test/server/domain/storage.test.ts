import crypto from "node:crypto";
import http from "node:http";
import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi, type TestApi } from "../../helpers/api";
import { LocalBlobStore, type BlobStore, type StoredBlob } from "../../../server/storage/blobStore";
import { findBlob } from "../../../server/db/repositories/blobs";

const UPLOAD = "/api/v1/storage/upload";
const BATCH = "/api/v1/storage/upload-batch";
const BLOB = (rootHash: string) => `/api/v1/storage/blobs/${rootHash}`;
const MB = 1024 * 1024;

const sha256 = (bytes: Buffer) => `0x${crypto.createHash("sha256").update(bytes).digest("hex")}`;
const b64 = (text: string | Buffer) => Buffer.from(text).toString("base64");

interface Ctx {
  api: TestApi;
  key: string;
  wallet: string;
}

async function withApi<T>(env: Record<string, string>, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  const { book, poster } = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(book, env);
  try {
    const key = await api.createKey(poster.address);
    return await fn({ api, key, wallet: poster.address.toLowerCase() });
  } finally {
    await api.close();
  }
}

/** A blob store that counts calls and can be told to fail or hang on the n-th put (0-based). */
class ScriptedStore implements BlobStore {
  puts = 0;
  constructor(
    private readonly inner: BlobStore,
    private readonly script: { failAt?: number; hangAt?: number; failGet?: boolean; decentralized?: boolean } = {},
  ) {}
  get decentralized() {
    return Boolean(this.script.decentralized);
  }
  async put(bytes: Buffer): Promise<StoredBlob> {
    const n = this.puts++;
    if (n === this.script.failAt) throw new Error("connection refused by the storage node");
    if (n === this.script.hangAt) return new Promise<StoredBlob>(() => undefined);
    return this.inner.put(bytes);
  }
  async get(rootHash: string) {
    if (this.script.failGet) throw new Error("disk on fire");
    return this.inner.get(rootHash);
  }
}

function httpGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (part: Buffer) => parts.push(part));
        res.on("end", () => resolve({ status: res.statusCode!, body: Buffer.concat(parts) }));
      })
      .on("error", reject);
  });
}

const localStore = (api: TestApi) => new LocalBlobStore(api.deps.config.api.storageDir);

describe("Storage API", () => {
  describe("POST /api/v1/storage/upload", () => {
    it("stores the bytes under their SHA-256 and serves them back, txHash null", () =>
      withApi({}, async ({ api, key, wallet }) => {
        const bytes = crypto.randomBytes(1000);
        const res = await api.request("POST", UPLOAD, { key, body: { data: b64(bytes) } });
        expect(res.status).to.equal(201);
        expect(res.json).to.deep.equal({ success: true, data: { rootHash: sha256(bytes), txHash: null } });

        const download = await fetch(`${api.url}${BLOB(sha256(bytes))}`);
        expect(download.status).to.equal(200);
        expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).to.equal(true);

        const row = await findBlob(api.deps.db, sha256(bytes));
        expect(row).to.include({ rootHash: sha256(bytes), size: 1000, uploader: wallet });
      }));

    it("is idempotent: the same bytes give the same root hash and keep their first uploader", () =>
      withApi({}, async ({ api, key, wallet }) => {
        const { others } = await loadFixture(deployEscrowFixture);
        const otherKey = await api.createKey(others[0].address);
        const data = b64("the same brief");
        const first = await api.request("POST", UPLOAD, { key, body: { data } });
        const second = await api.request("POST", UPLOAD, { key, body: { data } });
        const third = await api.request("POST", UPLOAD, { key: otherKey, body: { data } });
        expect([first.status, second.status, third.status]).to.deep.equal([201, 201, 201]);
        expect(second.json.data).to.deep.equal(first.json.data);
        expect(third.json.data).to.deep.equal(first.json.data);
        const rows = await api.deps.db("blobs").where({ root_hash: first.json.data.rootHash });
        expect(rows).to.have.length(1);
        expect(rows[0].uploader).to.equal(wallet);
      }));

    it("answers 401 UNAUTHORIZED without a key or with an unknown key", () =>
      withApi({}, async ({ api }) => {
        const none = await api.request("POST", UPLOAD, { body: { data: b64("x") } });
        expect(none.status).to.equal(401);
        expect(none.json.error.code).to.equal("UNAUTHORIZED");
        const unknown = await api.request("POST", UPLOAD, { key: `sk_${"0".repeat(64)}`, body: { data: b64("x") } });
        expect(unknown.status).to.equal(401);
        expect(unknown.json.error.code).to.equal("UNAUTHORIZED");
      }));

    it("answers MISSING_DATA when data is absent or null", () =>
      withApi({}, async ({ api, key }) => {
        for (const body of [{}, { data: null }, { other: "aGk=" }]) {
          const res = await api.request("POST", UPLOAD, { key, body });
          expect(res.status, JSON.stringify(body)).to.equal(400);
          expect(res.json.error.code).to.equal("MISSING_DATA");
          expect(res.json.error.message).to.match(/data/);
        }
      }));

    it("answers INVALID_DATA for anything but strict base64", () =>
      withApi({}, async ({ api, key }) => {
        const cases: unknown[] = [
          "not base64!",
          "aGVsbG8", // padding missing
          "aGVsbG8=\n", // trailing newline
          "aGVs bG8=", // whitespace
          "aGVsbG8-", // base64url alphabet
          "aGVsbG8_",
          "=aGVsbG8",
          "aGV=bG8=", // padding inside
          "a===",
          "QR==", // non-zero padding bits: does not round-trip (QQ== is canonical)
          "aGVsbG9=", // likewise for one pad character
          42,
          true,
          ["aGk="],
          { data: "aGk=" },
        ];
        for (const data of cases) {
          const res = await api.request("POST", UPLOAD, { key, body: { data } });
          expect(res.status, JSON.stringify(data)).to.equal(400);
          expect(res.json.error.code, JSON.stringify(data)).to.equal("INVALID_DATA");
          expect(res.json.error.message).to.match(/^data: /);
        }
        const canonical = await api.request("POST", UPLOAD, { key, body: { data: "QQ==" } });
        expect(canonical.status).to.equal(201);
        expect(canonical.json.data.rootHash).to.equal(sha256(Buffer.from("A")));
      }));

    it("answers EMPTY_DATA for zero bytes", () =>
      withApi({}, async ({ api, key }) => {
        const res = await api.request("POST", UPLOAD, { key, body: { data: "" } });
        expect(res.status).to.equal(400);
        expect(res.json.error.code).to.equal("EMPTY_DATA");
      }));

    it("takes a 10 MB blob and answers DATA_TOO_LARGE, naming 10 MB, one byte above", () =>
      withApi({}, async ({ api, key }) => {
        const largest = crypto.randomBytes(10 * MB);
        const ok = await api.request("POST", UPLOAD, { key, body: { data: largest.toString("base64") } });
        expect(ok.status).to.equal(201);
        expect(ok.json.data.rootHash).to.equal(sha256(largest));

        const above = Buffer.concat([largest, Buffer.from([7])]);
        const res = await api.request("POST", UPLOAD, { key, body: { data: above.toString("base64") } });
        expect(res.status).to.equal(400);
        expect(res.json.error.code).to.equal("DATA_TOO_LARGE");
        expect(res.json.error.message).to.contain("10 MB");
      }));

    it("answers PAYLOAD_TOO_LARGE for a body above the 14 MiB upload limit", () =>
      withApi({}, async ({ api, key }) => {
        const res = await api.request("POST", UPLOAD, { key, body: { data: "A".repeat(14 * MB) } });
        expect(res.status).to.equal(413);
        expect(res.json.error.code).to.equal("PAYLOAD_TOO_LARGE");
      }));

    it("answers 503 STORAGE_UNAVAILABLE with Retry-After when the store throws, and records nothing", () =>
      withApi({}, async ({ api, key }) => {
        api.deps.blobs = new ScriptedStore(localStore(api), { failAt: 0 });
        const res = await api.request("POST", UPLOAD, { key, body: { data: b64("brief") } });
        expect(res.status).to.equal(503);
        expect(res.json.error.code).to.equal("STORAGE_UNAVAILABLE");
        expect(res.json.error.message).to.match(/nothing was paid, retry after a minute/);
        expect(res.headers.get("retry-after")).to.equal("60");
        expect(Number((await api.deps.db("blobs").count({ n: "*" }).first())!.n)).to.equal(0);
      }));

    it("answers 503 STORAGE_UNAVAILABLE when the store does not answer within the upload time", () =>
      withApi({ UPLOAD_TIMEOUT_MS: "300" }, async ({ api, key }) => {
        api.deps.blobs = new ScriptedStore(localStore(api), { hangAt: 0 });
        const started = Date.now();
        const res = await api.request("POST", UPLOAD, { key, body: { data: b64("brief") } });
        expect(res.status).to.equal(503);
        expect(res.json.error.code).to.equal("STORAGE_UNAVAILABLE");
        expect(res.json.error.message).to.match(/in time/);
        expect(Date.now() - started).to.be.below(5000);
      }));

    it("defaults the upload time budget below the spec's 85 seconds", () =>
      withApi({}, async ({ api }) => {
        expect(api.deps.config.api.uploadTimeoutMs).to.be.within(1, 85_000);
      }));
  });

  describe("POST /api/v1/storage/upload-batch", () => {
    it("stores every item and answers their root hashes in input order", () =>
      withApi({}, async ({ api, key, wallet }) => {
        const blobs = ["first", "second", "first", "third"].map((t) => Buffer.from(t));
        const res = await api.request("POST", BATCH, { key, body: { items: blobs.map((b) => ({ data: b64(b) })) } });
        expect(res.status).to.equal(201);
        expect(res.json.data).to.deep.equal({ results: blobs.map((b) => ({ rootHash: sha256(b), txHash: null })) });
        for (const b of blobs) {
          const download = await api.request("GET", BLOB(sha256(b)));
          expect(download.text).to.equal(b.toString());
          expect(await findBlob(api.deps.db, sha256(b))).to.include({ size: b.length, uploader: wallet });
        }
      }));

    it("takes 50 items and answers BATCH_TOO_LARGE for 51", () =>
      withApi({}, async ({ api, key }) => {
        const items = (n: number) => Array.from({ length: n }, (_, i) => ({ data: b64(`item ${i}`) }));
        const fifty = await api.request("POST", BATCH, { key, body: { items: items(50) } });
        expect(fifty.status).to.equal(201);
        expect(fifty.json.data.results).to.have.length(50);
        const fiftyOne = await api.request("POST", BATCH, { key, body: { items: items(51) } });
        expect(fiftyOne.status).to.equal(400);
        expect(fiftyOne.json.error.code).to.equal("BATCH_TOO_LARGE");
      }));

    it("answers VALIDATION_ERROR naming items for no items, a missing list or a list that is not an array", () =>
      withApi({}, async ({ api, key }) => {
        for (const body of [{ items: [] }, {}, { items: { data: "aGk=" } }]) {
          const res = await api.request("POST", BATCH, { key, body });
          expect(res.status, JSON.stringify(body)).to.equal(400);
          expect(res.json.error.code).to.equal("VALIDATION_ERROR");
          expect(res.json.error.message).to.match(/^body\.items: /);
        }
      }));

    it("takes at most 4 items on decentralized storage (BATCH_TOO_LARGE above)", () =>
      withApi({}, async ({ api, key }) => {
        api.deps.blobs = new ScriptedStore(localStore(api), { decentralized: true });
        const items = (n: number) => Array.from({ length: n }, (_, i) => ({ data: b64(`item ${i}`) }));
        const five = await api.request("POST", BATCH, { key, body: { items: items(5) } });
        expect(five.status).to.equal(400);
        expect(five.json.error.code).to.equal("BATCH_TOO_LARGE");
        expect(five.json.error.message).to.contain("4");
        const four = await api.request("POST", BATCH, { key, body: { items: items(4) } });
        expect(four.status).to.equal(201);
      }));

    it("checks every item before storing any: INVALID_ITEMS lists each failure with its index and code", () =>
      withApi({ MAX_BLOB_BYTES: "1024" }, async ({ api, key }) => {
        const store = new ScriptedStore(localStore(api));
        api.deps.blobs = store;
        const valid = b64("a valid brief");
        const items = [
          { data: valid },
          {},
          { data: "%%%%" },
          { data: "" },
          { data: b64(Buffer.alloc(1025)) },
          "aGk=",
          { data: valid },
        ];
        const res = await api.request("POST", BATCH, { key, body: { items } });
        expect(res.status).to.equal(400);
        expect(res.json.error.code).to.equal("INVALID_ITEMS");
        const errors = res.json.error.details.errors as { index: number; code: string; message: string }[];
        expect(errors.map(({ index, code }) => ({ index, code }))).to.deep.equal([
          { index: 1, code: "MISSING_DATA" },
          { index: 2, code: "INVALID_DATA" },
          { index: 3, code: "EMPTY_DATA" },
          { index: 4, code: "DATA_TOO_LARGE" },
          { index: 5, code: "MISSING_DATA" },
        ]);
        expect(errors.map((e) => e.message.split(":")[0])).to.deep.equal([
          "item 2",
          "item 3",
          "item 4",
          "item 5",
          "item 6",
        ]);
        expect(errors[3].message).to.contain("1 KB");
        expect(store.puts).to.equal(0);
        expect((await api.request("GET", BLOB(sha256(Buffer.from("a valid brief"))))).status).to.equal(404);
      }));

    it("answers PAYLOAD_TOO_LARGE for a body above 2 MB", () =>
      withApi({}, async ({ api, key }) => {
        const items = Array.from({ length: 3 }, () => ({ data: b64(crypto.randomBytes(600 * 1024)) }));
        const res = await api.request("POST", BATCH, { key, body: { items } });
        expect(res.status).to.equal(413);
        expect(res.json.error.code).to.equal("PAYLOAD_TOO_LARGE");
      }));

    it("answers 502 UPLOAD_FAILED with the failing index, records nothing, and a resend gives the same hashes", () =>
      withApi({}, async ({ api, key }) => {
        const local = localStore(api);
        api.deps.blobs = new ScriptedStore(local, { failAt: 2 });
        const items = ["one", "two", "three", "four"].map((t) => ({ data: b64(t) }));
        const res = await api.request("POST", BATCH, { key, body: { items } });
        expect(res.status).to.equal(502);
        expect(res.json.error.code).to.equal("UPLOAD_FAILED");
        expect(res.json.error.details).to.deep.equal({ index: 2 });
        expect(res.json.error.message).to.contain("item 3");
        expect(Number((await api.deps.db("blobs").count({ n: "*" }).first())!.n)).to.equal(0);

        api.deps.blobs = local;
        const resend = await api.request("POST", BATCH, { key, body: { items } });
        expect(resend.status).to.equal(201);
        expect(resend.json.data.results.map((r: { rootHash: string }) => r.rootHash)).to.deep.equal(
          ["one", "two", "three", "four"].map((t) => sha256(Buffer.from(t))),
        );
        expect(Number((await api.deps.db("blobs").count({ n: "*" }).first())!.n)).to.equal(4);
      }));

    it("answers 503 STORAGE_UNAVAILABLE with the index when the store runs out of time", () =>
      withApi({ UPLOAD_TIMEOUT_MS: "300" }, async ({ api, key }) => {
        api.deps.blobs = new ScriptedStore(localStore(api), { hangAt: 1 });
        const items = ["one", "two", "three"].map((t) => ({ data: b64(t) }));
        const res = await api.request("POST", BATCH, { key, body: { items } });
        expect(res.status).to.equal(503);
        expect(res.json.error.code).to.equal("STORAGE_UNAVAILABLE");
        expect(res.json.error.details).to.deep.equal({ index: 1 });
        expect(res.headers.get("retry-after")).to.equal("60");
      }));

    it("answers 401 UNAUTHORIZED without a key", () =>
      withApi({}, async ({ api }) => {
        const res = await api.request("POST", BATCH, { body: { items: [{ data: b64("x") }] } });
        expect(res.status).to.equal(401);
        expect(res.json.error.code).to.equal("UNAUTHORIZED");
      }));

    it("counts one upload per item in the wallet's uploads bucket", () =>
      withApi({ RATE_WALLET_FAMILY_PER_MINUTE: "3" }, async ({ api, key }) => {
        const items = ["a", "b", "c"].map((t) => ({ data: b64(t) }));
        expect((await api.request("POST", BATCH, { key, body: { items } })).status).to.equal(201);
        const res = await api.request("POST", UPLOAD, { key, body: { data: b64("d") } });
        expect(res.status).to.equal(429);
        expect(res.json.error.code).to.equal("RATE_LIMIT");
        expect(res.json.error.message).to.contain("uploads");
        expect(Number(res.headers.get("retry-after"))).to.be.at.least(1);
      }));
  });

  describe("GET /api/v1/storage/blobs/:rootHash", () => {
    it("answers the raw bytes with ETag, immutable caching and 304 for a matching If-None-Match", () =>
      withApi({}, async ({ api, key }) => {
        const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 13]);
        const rootHash = sha256(bytes);
        await api.request("POST", UPLOAD, { key, body: { data: b64(bytes) } });

        const res = await fetch(`${api.url}${BLOB(rootHash)}`);
        expect(res.status).to.equal(200);
        expect(res.headers.get("content-type")).to.equal("application/octet-stream");
        expect(res.headers.get("etag")).to.equal(`"${rootHash}"`);
        expect(res.headers.get("cache-control")).to.contain("immutable");
        expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).to.equal(true);

        // node:http, not fetch: fetch turns a conditional request into Cache-Control: no-cache
        const cached = await httpGet(`${api.url}${BLOB(rootHash)}`, { "if-none-match": `"${rootHash}"` });
        expect(cached.status).to.equal(304);
        expect(cached.body.length).to.equal(0);
        const stale = await httpGet(`${api.url}${BLOB(rootHash)}`, { "if-none-match": `"0x${"0".repeat(64)}"` });
        expect(stale.status).to.equal(200);
        expect(stale.body.equals(bytes)).to.equal(true);
      }));

    it("accepts the hash without 0x and in upper case", () =>
      withApi({}, async ({ api, key }) => {
        const bytes = Buffer.from("case");
        await api.request("POST", UPLOAD, { key, body: { data: b64(bytes) } });
        const res = await api.request("GET", BLOB(sha256(bytes).slice(2).toUpperCase()));
        expect(res.status).to.equal(200);
        expect(res.text).to.equal("case");
        expect(res.headers.get("etag")).to.equal(`"${sha256(bytes)}"`);
      }));

    it("answers 400 INVALID_HASH for a malformed hash", () =>
      withApi({}, async ({ api }) => {
        for (const bad of ["xyz", `0x${"a".repeat(63)}`, `0x${"g".repeat(64)}`, `0x${"a".repeat(65)}`, "0x"]) {
          const res = await api.request("GET", BLOB(bad));
          expect(res.status, bad).to.equal(400);
          expect(res.json.error.code).to.equal("INVALID_HASH");
        }
      }));

    it("answers 404 NOT_FOUND for a hash nothing was stored under", () =>
      withApi({}, async ({ api }) => {
        const res = await api.request("GET", BLOB(sha256(Buffer.from("never uploaded"))));
        expect(res.status).to.equal(404);
        expect(res.json.error.code).to.equal("NOT_FOUND");
      }));

    it("answers 503 STORAGE_UNAVAILABLE when the store cannot be read", () =>
      withApi({}, async ({ api }) => {
        api.deps.blobs = new ScriptedStore(localStore(api), { failGet: true });
        const res = await api.request("GET", BLOB(sha256(Buffer.from("x"))));
        expect(res.status).to.equal(503);
        expect(res.json.error.code).to.equal("STORAGE_UNAVAILABLE");
      }));
  });
});
