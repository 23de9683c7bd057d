import { expect } from "chai";
import { Wallet, ethers, type BaseWallet } from "ethers";
import SwaggerParser from "@apidevtools/swagger-parser";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { deployEscrowFixture } from "../../helpers/fixtures";
import { startTestApi, type ApiResponse, type TestApi } from "../../helpers/api";
import {
  ACTIVE_KEY_CACHE_MS,
  NONCE_LENGTH,
  SIGN_IN_STATEMENT,
  buildSiweMessage,
  parseSiweMessage,
  type SiweMessage,
} from "../../../server/domain/accounts";
import { hashSecret, newApiKey } from "../../../server/domain/credentials";
import { AppError } from "../../../server/errors";

/** Not the address the test server listens on: the sign-in domain and URI come from PUBLIC_URL. */
const PUBLIC_URL = "https://market.example";
const DOMAIN = "market.example";
const HARDHAT_CHAIN_ID = 31337;
const NONCE_TTL_SECONDS = 600;
const SESSION_TTL_SECONDS = 3600;
const API_KEY = /^sk_[0-9a-f]{64}$/;
const SESSION_TOKEN = /^ses_[0-9a-f]{64}$/;

async function withApi<T>(fn: (api: TestApi) => Promise<T>, env: Record<string, string> = {}): Promise<T> {
  const { book } = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(book, { PUBLIC_URL, ...env });
  try {
    return await fn(api);
  } finally {
    await api.close();
  }
}

function expectError(res: ApiResponse, status: number, code: string, message?: RegExp) {
  expect(res.status, JSON.stringify(res.json)).to.equal(status);
  expect(res.json.success).to.equal(false);
  expect(res.json.error.code).to.equal(code);
  if (message) expect(res.json.error.message).to.match(message);
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

interface NonceData {
  nonce: string;
  issuedAt: string;
  expiresAt: string;
  domain: string;
  uri: string;
  chainId: number;
  message: string;
}

async function requestNonce(api: TestApi, address: string): Promise<NonceData> {
  const res = await api.request("POST", "/api/v1/auth/nonce", { body: { address } });
  expect(res.status, res.text).to.equal(200);
  return res.json.data;
}

async function verify(api: TestApi, message: string, signature: string): Promise<ApiResponse> {
  return api.request("POST", "/api/v1/auth/verify", { body: { message, signature } });
}

/** Signs `wallet` in through the two sign-in routes; returns the session token. */
async function signIn(api: TestApi, wallet: BaseWallet): Promise<string> {
  const { message } = await requestNonce(api, wallet.address);
  const res = await verify(api, message, await wallet.signMessage(message));
  expect(res.status, res.text).to.equal(200);
  return res.json.data.sessionToken;
}

/** The served message for `wallet`, changed by `edit`, rebuilt and signed by `signer` (default: the wallet). */
async function editedSignIn(
  api: TestApi,
  wallet: BaseWallet,
  edit: (m: SiweMessage) => SiweMessage,
  signer: BaseWallet = wallet,
): Promise<{ res: ApiResponse; nonce: NonceData }> {
  const nonce = await requestNonce(api, wallet.address);
  const message = buildSiweMessage(edit(parseSiweMessage(nonce.message)));
  return { res: await verify(api, message, await signer.signMessage(message)), nonce };
}

/** Signs `text` as `wallet` and posts it, for messages the builder would not write (malformed ones). */
async function verifyText(api: TestApi, wallet: BaseWallet, text: string): Promise<ApiResponse> {
  return verify(api, text, await wallet.signMessage(text));
}

async function createKey(api: TestApi, credential: string, label?: string): Promise<ApiResponse> {
  return api.request("POST", "/api/v1/api-keys", { body: label === undefined ? {} : { label }, ...bearer(credential) });
}

const isoPlus = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("API accounts: sign-in with Ethereum, sessions and API keys", () => {
  describe("EIP-4361 messages (domain module)", () => {
    it("parses the EIP's own example, resources included", () => {
      const text = [
        "service.invalid wants you to sign in with your Ethereum account:",
        "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2",
        "",
        "I accept the ServiceOrg Terms of Service: https://service.invalid/tos",
        "",
        "URI: https://service.invalid/login",
        "Version: 1",
        "Chain ID: 1",
        "Nonce: 32891756",
        "Issued At: 2021-09-30T16:25:24Z",
        "Resources:",
        "- ipfs://bafybeiemxf5abjwjbikoz4mc3a3dla6ual3jsgpdr4cjr3oz3evfyavhwq/",
        "- https://example.com/my-web2-claim.json",
      ].join("\n");
      const parsed = parseSiweMessage(text);
      expect(parsed).to.deep.equal({
        domain: "service.invalid",
        address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2",
        statement: "I accept the ServiceOrg Terms of Service: https://service.invalid/tos",
        uri: "https://service.invalid/login",
        version: "1",
        chainId: 1,
        nonce: "32891756",
        issuedAt: "2021-09-30T16:25:24Z",
        resources: [
          "ipfs://bafybeiemxf5abjwjbikoz4mc3a3dla6ual3jsgpdr4cjr3oz3evfyavhwq/",
          "https://example.com/my-web2-claim.json",
        ],
      });
      expect(buildSiweMessage(parsed)).to.equal(text);
    });

    it("round-trips every optional field, and a message without a statement (three line feeds)", () => {
      const full: SiweMessage = {
        scheme: "https",
        domain: "market.example:8443",
        address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2",
        uri: "https://market.example:8443/login",
        version: "1",
        chainId: 8453,
        nonce: "abcdEFGH1234",
        issuedAt: "2025-01-01T00:00:00.000Z",
        expirationTime: "2025-01-01T00:10:00+01:00",
        notBefore: "2024-12-31T23:59:00Z",
        requestId: "req-42",
        resources: ["https://market.example/terms"],
      };
      const text = buildSiweMessage(full);
      expect(text).to.contain("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2\n\n\nURI: ");
      expect(parseSiweMessage(text)).to.deep.equal(full);
    });

    it("names the field of a malformed line and of a missing one", () => {
      const wallet = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2";
      const base = { domain: DOMAIN, address: wallet, uri: PUBLIC_URL, version: "1" as const, chainId: 1 };
      const message = buildSiweMessage({ ...base, nonce: "abcdefgh", issuedAt: "2025-01-01T00:00:00Z" });
      const attempt = (text: string) => {
        try {
          parseSiweMessage(text);
        } catch (error) {
          expect(error).to.be.instanceOf(AppError);
          return `${(error as AppError).code} ${(error as AppError).message}`;
        }
        throw new Error("parsed");
      };
      expect(attempt(message.replace("Version: 1", "Version: 2"))).to.match(/^VALIDATION_ERROR message\.Version/);
      expect(attempt(message.replace(/\nNonce: .*/, ""))).to.match(/^MISSING_FIELDS message\.Nonce/);
      expect(attempt(message.replace("Issued At: 2025-01-01", "Issued At: 2025-02-30"))).to.match(
        /^VALIDATION_ERROR message\.Issued At/,
      );
      expect(attempt(message.replace(wallet, wallet.toLowerCase()))).to.match(
        /^VALIDATION_ERROR message\.address.*EIP-55/,
      );
    });
  });

  describe("POST /api/v1/auth/nonce", () => {
    it("answers a fresh nonce and the EIP-4361 message to sign for the address", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const before = Math.floor(Date.now() / 1000);
        const data = await requestNonce(api, wallet.address.toLowerCase());
        expect(data.nonce).to.match(new RegExp(`^[A-Za-z0-9]{${NONCE_LENGTH}}$`));
        expect(NONCE_LENGTH).to.be.at.least(16);
        expect(data).to.include({ domain: DOMAIN, uri: PUBLIC_URL, chainId: HARDHAT_CHAIN_ID });
        expect(Date.parse(data.issuedAt) / 1000).to.be.within(before, before + 5);
        expect(data.expiresAt).to.equal(isoPlus(data.issuedAt, NONCE_TTL_SECONDS));
        expect(parseSiweMessage(data.message)).to.deep.equal({
          domain: DOMAIN,
          address: wallet.address, // EIP-55 in the message, whatever case was asked for
          statement: SIGN_IN_STATEMENT,
          uri: PUBLIC_URL,
          version: "1",
          chainId: HARDHAT_CHAIN_ID,
          nonce: data.nonce,
          issuedAt: data.issuedAt,
          expirationTime: data.expiresAt,
        });
        const row = await api.deps.db("auth_nonces").where({ nonce: data.nonce }).first();
        expect(row.address).to.equal(wallet.address.toLowerCase());
        expect(row.used_at).to.equal(null);

        const again = await requestNonce(api, wallet.address);
        expect(again.nonce).to.not.equal(data.nonce);
      }));

    it("refuses an address that is not 0x and 40 hex with VALIDATION_ERROR naming body.address", () =>
      withApi(async (api) => {
        expectError(
          await api.request("POST", "/api/v1/auth/nonce", { body: { address: "0x1234" } }),
          400,
          "VALIDATION_ERROR",
          /^body\.address: /,
        );
        expectError(
          await api.request("POST", "/api/v1/auth/nonce", { body: {} }),
          400,
          "VALIDATION_ERROR",
          /body\.address/,
        );
      }));
  });

  describe("POST /api/v1/auth/verify", () => {
    it("opens a session for the signer, records the user and stores only the token's hash", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const { message, nonce } = await requestNonce(api, wallet.address);
        const before = Math.floor(Date.now() / 1000);
        const res = await verify(api, message, await wallet.signMessage(message));
        expect(res.status, res.text).to.equal(200);
        const { sessionToken, address, expiresAt } = res.json.data;
        expect(sessionToken).to.match(SESSION_TOKEN);
        expect(address).to.equal(wallet.address.toLowerCase());
        expect(Date.parse(expiresAt) / 1000).to.be.within(
          before + SESSION_TTL_SECONDS,
          before + SESSION_TTL_SECONDS + 5,
        );

        const sessions = await api.deps.db("sessions");
        expect(sessions).to.have.length(1);
        expect(sessions[0].token_hash).to.equal(hashSecret(sessionToken));
        expect(JSON.stringify(sessions)).to.not.contain(sessionToken.slice(4));
        expect((await api.deps.db("auth_nonces").where({ nonce }).first()).used_at).to.not.equal(null);
        const user = await api.deps.db("users").where({ address }).first();
        expect(Number(user.created_at)).to.be.within(before, before + 5);

        const stats = await api.request("GET", "/api/v1/stats");
        expect(stats.json.data.registeredUsers).to.equal(1);

        // A second sign-in keeps the user's creation time and moves its last sign-in.
        await api.deps.db("users").where({ address }).update({ created_at: 100, last_sign_in_at: 100 });
        await signIn(api, wallet);
        const again = await api.deps.db("users").where({ address }).first();
        expect(Number(again.created_at)).to.equal(100);
        expect(Number(again.last_sign_in_at)).to.be.at.least(before);
        expect(Number((await api.deps.db("users").count({ n: "*" }).first())?.n)).to.equal(1);
      }));

    it("accepts grammar variants: no statement, a scheme, Request ID and Resources, another path on the service", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const variants: ((m: SiweMessage) => SiweMessage)[] = [
          ({ statement: _statement, ...m }) => m,
          (m) => ({ ...m, scheme: "https", uri: `${PUBLIC_URL}/login`, requestId: "r-1", resources: ["ipfs://x"] }),
          ({ expirationTime: _expiration, ...m }) => ({ ...m, notBefore: m.issuedAt }),
        ];
        for (const edit of variants) {
          const { res } = await editedSignIn(api, wallet, edit);
          expect(res.status, res.text).to.equal(200);
          expect(res.json.data.address).to.equal(wallet.address.toLowerCase());
        }
      }));

    it("refuses a nonce that was already used with NONCE_INVALID", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const { message } = await requestNonce(api, wallet.address);
        const signature = await wallet.signMessage(message);
        expect((await verify(api, message, signature)).status).to.equal(200);
        expectError(await verify(api, message, signature), 400, "NONCE_INVALID", /already used/);
      }));

    it("lets exactly one of two concurrent sign-ins with the same nonce through", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const { message } = await requestNonce(api, wallet.address);
        const signature = await wallet.signMessage(message);
        const results = await Promise.all([verify(api, message, signature), verify(api, message, signature)]);
        expect(results.map((r) => r.status).sort()).to.deep.equal([200, 400]);
        expectError(
          results.find((r) => r.status === 400)!,
          400,
          "NONCE_INVALID",
          /already used/,
        );
        expect(await api.deps.db("sessions")).to.have.length(1);
      }));

    it("refuses a nonce the service never issued with NONCE_INVALID", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const { res } = await editedSignIn(api, wallet, (m) => ({ ...m, nonce: "madeUpNonce12345" }));
        expectError(res, 400, "NONCE_INVALID", /unknown nonce/);
      }));

    it("refuses a nonce issued for another address with NONCE_MISMATCH, leaving it usable by its owner", () =>
      withApi(async (api) => {
        const owner = Wallet.createRandom();
        const other = Wallet.createRandom();
        const { res, nonce } = await editedSignIn(api, owner, (m) => ({ ...m, address: other.address }), other);
        expectError(res, 400, "NONCE_MISMATCH", /another address/);
        const ok = await verify(api, nonce.message, await owner.signMessage(nonce.message));
        expect(ok.status, ok.text).to.equal(200);
      }));

    it("refuses a signature not by the message's address with BAD_SIGNATURE, leaving the nonce usable", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const impostor = Wallet.createRandom();
        const { message } = await requestNonce(api, wallet.address);
        expectError(await verify(api, message, await impostor.signMessage(message)), 400, "BAD_SIGNATURE", /address/);
        // A signature over other text, and one that recovers to no key at all.
        expectError(await verify(api, message, await wallet.signMessage(`${message} `)), 400, "BAD_SIGNATURE");
        expectError(await verify(api, message, `0x${"00".repeat(65)}`), 400, "BAD_SIGNATURE", /signature/);
        const ok = await verify(api, message, await wallet.signMessage(message));
        expect(ok.status, ok.text).to.equal(200);
      }));

    it("refuses another domain, URI, scheme or chain id with BAD_SIGNATURE saying which", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const cases: [(m: SiweMessage) => SiweMessage, RegExp][] = [
          [(m) => ({ ...m, domain: "evil.example" }), /domain evil\.example/],
          [(m) => ({ ...m, uri: "https://evil.example" }), /URI https:\/\/evil\.example/],
          [(m) => ({ ...m, uri: "http://market.example" }), /URI http:\/\/market\.example/],
          [(m) => ({ ...m, scheme: "http" }), /scheme http/],
          [(m) => ({ ...m, chainId: 1 }), /Chain ID 1 /],
        ];
        for (const [edit, message] of cases) {
          const { res } = await editedSignIn(api, wallet, edit);
          expectError(res, 400, "BAD_SIGNATURE", message);
        }
        // None of the refused attempts consumed its nonce or signed anyone in.
        expect(await api.deps.db("auth_nonces").whereNotNull("used_at")).to.have.length(0);
        expect(await api.deps.db("sessions")).to.have.length(0);
      }));

    it("refuses a message past its Expiration Time or before its Not Before with NONCE_INVALID", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const expired = await editedSignIn(api, wallet, (m) => ({ ...m, expirationTime: "2020-01-01T00:00:00Z" }));
        expectError(expired.res, 400, "NONCE_INVALID", /expired at 2020/);
        const early = await editedSignIn(api, wallet, (m) => ({ ...m, notBefore: isoPlus(m.issuedAt, 3600) }));
        expectError(early.res, 400, "NONCE_INVALID", /not valid before/);
        // The nonce of the refused message is still good for a correct one.
        const ok = await verify(api, expired.nonce.message, await wallet.signMessage(expired.nonce.message));
        expect(ok.status, ok.text).to.equal(200);
      }));

    it("refuses a nonce older than its time to live with NONCE_INVALID (SIWE_NONCE_TTL_SECONDS=1)", () =>
      withApi(
        async (api) => {
          const wallet = Wallet.createRandom();
          const nonce = await requestNonce(api, wallet.address);
          expect(nonce.expiresAt).to.equal(isoPlus(nonce.issuedAt, 1));
          api.clock.advanceWall(3);
          // The served message says when it expires...
          expectError(
            await verify(api, nonce.message, await wallet.signMessage(nonce.message)),
            400,
            "NONCE_INVALID",
            /message expired/,
          );
          // ...and a client-built message without an Expiration Time meets the nonce's own expiry.
          const { expirationTime: _expiration, ...fields } = parseSiweMessage(nonce.message);
          expectError(
            await verifyText(api, wallet, buildSiweMessage(fields)),
            400,
            "NONCE_INVALID",
            /nonce has expired/,
          );
        },
        { SIWE_NONCE_TTL_SECONDS: "1" },
      ));

    it("answers MISSING_FIELDS naming a required line that is absent", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const { message } = await requestNonce(api, wallet.address);
        const lines = message.split("\n");
        const cases: [string, RegExp][] = [
          [message.replace(/\nNonce: .*/, ""), /^message\.Nonce: /],
          [message.replace(/\nIssued At: .*/, ""), /^message\.Issued At: /],
          [message.replace(/\nChain ID: .*/, ""), /^message\.Chain ID: /],
          [message.replace(/\nURI: .*/, ""), /^message\.URI: /],
          [lines[0], /^message\.address: /],
          [lines.slice(0, 3).join("\n"), /^message\.URI: /],
        ];
        for (const [text, field] of cases)
          expectError(await verifyText(api, wallet, text), 400, "MISSING_FIELDS", field);
      }));

    it("answers VALIDATION_ERROR naming the field of a malformed message or body", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const { message } = await requestNonce(api, wallet.address);
        const cases: [string, RegExp][] = [
          [message.replace("Version: 1", "Version: 2"), /^message\.Version: /],
          [message.replace(wallet.address, wallet.address.toLowerCase()), /^message\.address: .*EIP-55/],
          [message.replace(`Chain ID: ${HARDHAT_CHAIN_ID}`, "Chain ID: 0x7a69"), /^message\.Chain ID: /],
          [message.replace(/Issued At: [^\n]*/, "Issued At: yesterday"), /^message\.Issued At: /],
          [message.replace(/Nonce: [^\n]*/, "Nonce: short"), /^message\.Nonce: /],
          [message.replace(/URI: [^\n]*/, "URI: not a uri"), /^message\.URI: /],
          [message.replace(SIGN_IN_STATEMENT, "Sign in <now>"), /^message\.statement: /],
          [message.replace(" wants you", " would like you"), /^message\.domain: /],
          [message.replace(/\n/g, "\r\n"), /^message\.domain: .*LF/],
          [`${message}\n`, /^message: must not end with a line break/],
          [`${message}\nHello: there`, /^message: unexpected line 12/],
        ];
        for (const [text, field] of cases) {
          expectError(await verifyText(api, wallet, text), 400, "VALIDATION_ERROR", field);
        }
        const signature = await wallet.signMessage(message);
        const body = (b: unknown) => api.request("POST", "/api/v1/auth/verify", { body: b });
        expectError(await body({ message }), 400, "VALIDATION_ERROR", /^body\.signature: /);
        expectError(await body({ signature }), 400, "VALIDATION_ERROR", /^body\.message: /);
        expectError(await body({ message, signature: "0x1234" }), 400, "VALIDATION_ERROR", /^body\.signature: /);
        expectError(await body({ message: 42, signature }), 400, "VALIDATION_ERROR", /^body\.message: /);
        expectError(await body({ message, signature, extra: 1 }), 400, "VALIDATION_ERROR", /extra/);
        // None of it consumed the nonce.
        expect((await verify(api, message, signature)).status).to.equal(200);
      }));
  });

  describe("API keys", () => {
    it("signs in, creates a key, uses it on whoami by either header, lists and revokes it: next request 401", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const address = wallet.address.toLowerCase();
        const session = await signIn(api, wallet);

        const created = await createKey(api, session, "laptop");
        expect(created.status, created.text).to.equal(201);
        const { id, key, prefix, label, createdAt } = created.json.data;
        expect(key).to.match(API_KEY);
        expect(prefix).to.equal(key.slice(0, 11));
        expect(label).to.equal("laptop");
        expect(Date.parse(createdAt)).to.be.closeTo(Date.now(), 10_000);
        const rows = await api.deps.db("api_keys");
        expect(rows).to.have.length(1);
        expect(rows[0]).to.include({ address, key_hash: hashSecret(key), prefix });
        expect(JSON.stringify(rows)).to.not.contain(key.slice(11));

        for (const headers of [{ "x-api-key": key }, { authorization: `Bearer ${key}` }] as Record<string, string>[]) {
          const me = await api.request("GET", "/api/v1/api-keys/whoami", { headers });
          expect(me.status, me.text).to.equal(200);
          expect(me.json.data).to.deep.equal({ address, addresses: [address] });
        }

        let listed: ApiResponse | undefined;
        for (let attempt = 0; attempt < 40; attempt++) {
          listed = await api.request("GET", "/api/v1/api-keys", bearer(session));
          if (listed.json.data.keys[0]?.lastUsedAt) break;
          await sleep(50);
        }
        expect(listed!.status).to.equal(200);
        expect(listed!.json.data.keys).to.have.length(1);
        const [entry] = listed!.json.data.keys;
        expect(entry).to.have.keys(["id", "prefix", "label", "createdAt", "revokedAt", "lastUsedAt", "expiresAt"]);
        expect(entry).to.include({ id, prefix, label: "laptop", createdAt, revokedAt: null, expiresAt: null });
        expect(Date.parse(entry.lastUsedAt)).to.be.closeTo(Date.now(), 10_000);

        const revoked = await api.request("DELETE", `/api/v1/api-keys/${id}`, bearer(session));
        expect(revoked.status, revoked.text).to.equal(200);
        expect(revoked.json.data).to.deep.equal({ id, revoked: true });

        expectError(await api.request("GET", "/api/v1/api-keys/whoami", { key }), 401, "UNAUTHORIZED", /revoked/);
        expectError(await api.request("GET", "/api/v1/api-keys/whoami", bearer(key)), 401, "UNAUTHORIZED");
        const after = await api.request("GET", "/api/v1/api-keys", bearer(session));
        expect(after.json.data.keys[0].revokedAt).to.be.a("string");
      }));

    it("ends a web session key on its own after SESSION_TTL_SECONDS (401 saying the session expired), uncounted", () =>
      withApi(
        async (api) => {
          const wallet = Wallet.createRandom();
          const session = await signIn(api, wallet);
          const ordinary = (await createKey(api, session, "cli")).json.data;
          expect(ordinary.expiresAt).to.equal(null);
          const created = await api.request("POST", "/api/v1/api-keys", {
            body: { label: "web app session", sessionKey: true },
            ...bearer(session),
          });
          expect(created.status, created.text).to.equal(201);
          const web = created.json.data;
          expect(web.expiresAt).to.equal(isoPlus(web.createdAt, SESSION_TTL_SECONDS));
          // Two active keys: the wallet's limit (API_MAX_KEYS_PER_WALLET=2).
          expectError(await createKey(api, ordinary.key, "third"), 409, "KEY_LIMIT");

          api.clock.advanceWall(SESSION_TTL_SECONDS - 2);
          const before = await api.request("GET", "/api/v1/api-keys/whoami", { key: web.key });
          expect(before.status, before.text).to.equal(200);

          api.clock.advanceWall(3);
          const after = await api.request("GET", "/api/v1/api-keys/whoami", { key: web.key });
          expectError(after, 401, "UNAUTHORIZED", /session expired.*sign in again/);
          expect(after.json.error.reason).to.equal("SESSION_EXPIRED");
          expect(after.json.error.details).to.deep.equal({ expiredAt: web.expiresAt });
          expect(after.headers.get("www-authenticate")).to.match(/^Bearer/);
          // Every route refuses it, the key routes included; the ordinary key goes on working.
          expectError(await api.request("GET", "/api/v1/api-keys", bearer(web.key)), 401, "UNAUTHORIZED", /expired/);
          expect((await api.request("GET", "/api/v1/api-keys/whoami", { key: ordinary.key })).status).to.equal(200);

          // The expired key no longer counts toward the limit, and the list shows when each key ends.
          const third = await createKey(api, ordinary.key, "third");
          expect(third.status, third.text).to.equal(201);
          const listed = (await api.request("GET", "/api/v1/api-keys", { key: ordinary.key })).json.data.keys;
          expect(listed.map((k: { id: number; expiresAt: string | null }) => [k.id, k.expiresAt])).to.deep.equal([
            [ordinary.id, null],
            [web.id, web.expiresAt],
            [third.json.data.id, null],
          ]);
          // Revoking an expired key still works (the web app's sign-out after the fact).
          const revoked = await api.request("DELETE", `/api/v1/api-keys/${web.id}`, { key: ordinary.key });
          expect(revoked.status, revoked.text).to.equal(200);
          expectError(
            await api.request("GET", "/api/v1/api-keys/whoami", { key: web.key }),
            401,
            "UNAUTHORIZED",
            /revoked/,
          );
        },
        { API_MAX_KEYS_PER_WALLET: "2" },
      ));

    it("refuses a sessionKey that is not a boolean", () =>
      withApi(async (api) => {
        const session = await signIn(api, Wallet.createRandom());
        const res = await api.request("POST", "/api/v1/api-keys", { body: { sessionKey: "yes" }, ...bearer(session) });
        expectError(res, 400, "VALIDATION_ERROR", /^body\.sessionKey/);
      }));

    it("lets a key create, list and revoke keys of its own wallet, itself included", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const first = (await createKey(api, await signIn(api, wallet))).json.data;
        const second = await createKey(api, first.key);
        expect(second.status, second.text).to.equal(201);
        expect(second.json.data.label).to.equal(null);
        const me = await api.request("GET", "/api/v1/api-keys/whoami", { key: second.json.data.key });
        expect(me.json.data.address).to.equal(wallet.address.toLowerCase());

        const listed = await api.request("GET", "/api/v1/api-keys", { key: second.json.data.key });
        expect(listed.json.data.keys.map((k: { id: number }) => k.id)).to.deep.equal([first.id, second.json.data.id]);

        const self = await api.request("DELETE", `/api/v1/api-keys/${first.id}`, { key: first.key });
        expect(self.status, self.text).to.equal(200);
        expectError(await api.request("GET", "/api/v1/api-keys", { key: first.key }), 401, "UNAUTHORIZED");
        expect((await api.request("GET", "/api/v1/api-keys/whoami", { key: second.json.data.key })).status).to.equal(
          200,
        );
      }));

    it("keeps wallets apart: another wallet's key is NOT_FOUND; revoking one wallet's key spares another's", () =>
      withApi(async (api) => {
        const alice = Wallet.createRandom();
        const bob = Wallet.createRandom();
        const aliceKey = (await createKey(api, await signIn(api, alice))).json.data;
        const bobSession = await signIn(api, bob);
        const bobKey = (await createKey(api, bobSession)).json.data;

        expectError(
          await api.request("DELETE", `/api/v1/api-keys/${aliceKey.id}`, bearer(bobSession)),
          404,
          "NOT_FOUND",
        );
        expectError(
          await api.request("DELETE", `/api/v1/api-keys/${aliceKey.id}`, { key: bobKey.key }),
          404,
          "NOT_FOUND",
        );
        expectError(
          await api.request("DELETE", "/api/v1/api-keys/999999", { key: bobKey.key }),
          404,
          "NOT_FOUND",
          /999999/,
        );
        const bobList = await api.request("GET", "/api/v1/api-keys", { key: bobKey.key });
        expect(bobList.json.data.keys.map((k: { id: number }) => k.id)).to.deep.equal([bobKey.id]);
        expect((await api.request("GET", "/api/v1/api-keys/whoami", { key: aliceKey.key })).json.data.address).to.equal(
          alice.address.toLowerCase(),
        );

        expect((await api.request("DELETE", `/api/v1/api-keys/${bobKey.id}`, { key: bobKey.key })).status).to.equal(
          200,
        );
        expectError(await api.request("GET", "/api/v1/api-keys/whoami", { key: bobKey.key }), 401, "UNAUTHORIZED");
        const alicesMe = await api.request("GET", "/api/v1/api-keys/whoami", { key: aliceKey.key });
        expect(alicesMe.status).to.equal(200);
        expect(alicesMe.json.data.address).to.equal(alice.address.toLowerCase());
      }));

    it("revokes idempotently, keeping the first revocation time", () =>
      withApi(async (api) => {
        const session = await signIn(api, Wallet.createRandom());
        const { id } = (await createKey(api, session)).json.data;
        await api.request("DELETE", `/api/v1/api-keys/${id}`, bearer(session));
        await api.deps.db("api_keys").where({ id }).update({ revoked_at: 1000 });
        const again = await api.request("DELETE", `/api/v1/api-keys/${id}`, bearer(session));
        expect(again.status).to.equal(200);
        expect(again.json.data).to.deep.equal({ id, revoked: true });
        const listed = await api.request("GET", "/api/v1/api-keys", bearer(session));
        expect(listed.json.data.keys[0].revokedAt).to.equal(new Date(1000_000).toISOString());
      }));

    it("stops a key revoked by another process within ACTIVE_KEY_CACHE_MS, and takes a key created elsewhere at once", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const session = await signIn(api, wallet);
        const { id, key } = (await createKey(api, session)).json.data;
        const whoami = () => api.request("GET", "/api/v1/api-keys/whoami", { key });
        expect((await whoami()).status).to.equal(200);
        // Another API process revokes it: the row changes, this process's cache does not hear of it.
        await api.deps
          .db("api_keys")
          .where({ id })
          .update({ revoked_at: Math.floor(Date.now() / 1000) });
        expect((await whoami()).status, "trusted for ACTIVE_KEY_CACHE_MS").to.equal(200);
        api.clock.advanceWall(ACTIVE_KEY_CACHE_MS / 1000);
        expectError(await whoami(), 401, "UNAUTHORIZED", /revoked/);

        // A key written by another process: never cached as unknown, so it works on its first request.
        const other = newApiKey();
        await api.deps.db("api_keys").insert({
          address: wallet.address.toLowerCase(),
          key_hash: other.keyHash,
          prefix: other.prefix,
          label: null,
          created_at: Math.floor(Date.now() / 1000),
        });
        const me = await api.request("GET", "/api/v1/api-keys/whoami", { key: other.key });
        expect(me.status, me.text).to.equal(200);
      }));

    it("refuses session tokens on whoami, and unknown, expired or malformed credentials everywhere with 401", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const session = await signIn(api, wallet);
        expectError(
          await api.request("GET", "/api/v1/api-keys/whoami", bearer(session)),
          401,
          "UNAUTHORIZED",
          /API key/,
        );
        expectError(await api.request("GET", "/api/v1/api-keys/whoami", { key: session }), 401, "UNAUTHORIZED");
        expectError(await api.request("GET", "/api/v1/api-keys/whoami"), 401, "UNAUTHORIZED", /API key required/);
        expectError(await api.request("GET", "/api/v1/api-keys"), 401, "UNAUTHORIZED", /session/);
        expectError(await api.request("POST", "/api/v1/api-keys", { body: {} }), 401, "UNAUTHORIZED");
        expectError(await api.request("DELETE", "/api/v1/api-keys/1"), 401, "UNAUTHORIZED");
        const unknownKey = `sk_${"ab".repeat(32)}`;
        const unknownSession = `ses_${"ab".repeat(32)}`;
        expectError(await api.request("GET", "/api/v1/api-keys/whoami", { key: unknownKey }), 401, "UNAUTHORIZED");
        expectError(await api.request("GET", "/api/v1/api-keys", bearer(unknownSession)), 401, "UNAUTHORIZED");
        expectError(await api.request("GET", "/api/v1/api-keys", bearer("sk_short")), 401, "UNAUTHORIZED");

        expect((await api.request("GET", "/api/v1/api-keys", bearer(session))).status).to.equal(200);
        await api.deps.db("sessions").update({ expires_at: Math.floor(Date.now() / 1000) - 1 });
        expectError(await api.request("GET", "/api/v1/api-keys", bearer(session)), 401, "UNAUTHORIZED", /expired/);
      }));

    it("validates the create body and the key id", () =>
      withApi(async (api) => {
        const session = await signIn(api, Wallet.createRandom());
        const post = (options: { body?: unknown; rawBody?: string }) =>
          api.request("POST", "/api/v1/api-keys", {
            ...options,
            headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
          });
        expectError(await post({ body: { label: "x".repeat(101) } }), 400, "VALIDATION_ERROR", /^body\.label: /);
        expectError(await post({ body: { label: "   " } }), 400, "VALIDATION_ERROR", /^body\.label: /);
        expectError(await post({ body: { label: "a\u0007b" } }), 400, "VALIDATION_ERROR", /^body\.label: /);
        expectError(await post({ body: { lable: "typo" } }), 400, "VALIDATION_ERROR", /lable/);
        expectError(await post({}), 400, "VALIDATION_ERROR", /^body: /);
        expectError(await post({ rawBody: "{" }), 400, "INVALID_JSON");
        const trimmed = await post({ body: { label: "  ci runner  " } });
        expect(trimmed.json.data.label).to.equal("ci runner");
        for (const id of ["abc", "0", "-1", "1.5", "99999999999"]) {
          expectError(
            await api.request("DELETE", `/api/v1/api-keys/${id}`, bearer(session)),
            400,
            "VALIDATION_ERROR",
            /^path\.id: /,
          );
        }
      }));
  });

  describe("POST /api/v1/auth/signout", () => {
    it("ends the session at once (its next request is 401) and leaves the wallet's keys working", () =>
      withApi(async (api) => {
        const wallet = Wallet.createRandom();
        const session = await signIn(api, wallet);
        const made = await createKey(api, session);
        expect(made.status, made.text).to.equal(201);
        const other = await signIn(api, wallet);
        const out = await api.request("POST", "/api/v1/auth/signout", bearer(session));
        expect(out.status, out.text).to.equal(200);
        expect(out.json.data).to.deep.equal({ signedOut: true });
        expectError(await createKey(api, session), 401, "UNAUTHORIZED", /session/);
        expectError(await api.request("POST", "/api/v1/auth/signout", bearer(session)), 401, "UNAUTHORIZED");
        // Only that session: the wallet's other session and its key still work.
        expect((await createKey(api, other)).status).to.equal(201);
        expect((await api.request("GET", "/api/v1/api-keys/whoami", bearer(made.json.data.key))).status).to.equal(200);
        // A key is not a session: revoking is how a key ends.
        expectError(
          await api.request("POST", "/api/v1/auth/signout", bearer(made.json.data.key)),
          400,
          "VALIDATION_ERROR",
          /DELETE \/api\/v1\/api-keys/,
        );
        expectError(await api.request("POST", "/api/v1/auth/signout"), 401, "UNAUTHORIZED");
      }));
  });

  describe("OpenAPI", () => {
    it("describes the accounts routes, DELETE included, in a valid document", () =>
      withApi(async (api) => {
        const res = await api.request("GET", "/api/v1/openapi.json");
        expect(res.status).to.equal(200);
        const doc = res.json;
        expect(doc.paths["/api/v1/auth/nonce"].post).to.be.an("object");
        expect(doc.paths["/api/v1/auth/verify"].post.responses.default.description).to.contain("NONCE_MISMATCH");
        expect(doc.paths["/api/v1/api-keys"].post.responses).to.have.property("201");
        expect(doc.paths["/api/v1/api-keys"].get).to.be.an("object");
        expect(doc.paths["/api/v1/api-keys/{id}"].delete.parameters[0]).to.include({ name: "id", in: "path" });
        expect(doc.paths["/api/v1/api-keys/whoami"].get.security).to.deep.equal([{ ApiKey: [] }, { Bearer: [] }]);
        await SwaggerParser.validate(structuredClone(doc));
        expect(ethers.isAddress(doc.components.schemas.SignInNonceRequest.properties.address.example)).to.equal(true);
      }));
  });
});
