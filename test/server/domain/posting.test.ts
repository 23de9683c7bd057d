import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import type { TaskEscrow } from "../../../typechain-types";
import { deployEscrowFixture, DAY, HOUR, STATUS } from "../../helpers/fixtures";
import { startTestApi, type TestApi } from "../../helpers/api";
import { claimHash, findReservation } from "../../../server/db/repositories/hashReservations";
import { TX_GAS_CAP, createTasksGasFallback, withMargin, type TaskCall } from "../../../server/chain/escrowCalls";

type Fixture = Awaited<ReturnType<typeof deployEscrowFixture>>;

const brief = (text: string) => ethers.sha256(ethers.toUtf8Bytes(text));
const ZERO_HASH = `0x${"0".repeat(64)}`;
const MAX_UINT256 = (1n << 256n) - 1n;

/** A fresh API (fresh database and indexer) over the fixture's chain, with the poster's key. */
async function withApi<T>(
  fn: (ctx: Fixture & { api: TestApi; key: string }) => Promise<T>,
  env: Record<string, string> = {},
): Promise<T> {
  const fixture = await loadFixture(deployEscrowFixture);
  const api = await startTestApi(fixture.book, env);
  try {
    const key = await api.createKey(fixture.poster.address);
    return await fn({ ...fixture, api, key });
  } finally {
    await api.close();
  }
}

/** A valid single-build body (without token) for `text`'s brief. */
const task = (text: string, overrides: Record<string, unknown> = {}) => ({
  taskHash: brief(text),
  amount: "5000000",
  locationZone: "global",
  duration: String(DAY),
  ...overrides,
});

/** The caller's wallet sends an unsigned transaction as a client would; returns the receipt. */
async function send(
  signer: HardhatEthersSigner,
  unsignedTx: { to: string; data: string; from: string; value: string; gas?: string },
) {
  expect(unsignedTx.from).to.equal(signer.address.toLowerCase());
  const tx = await signer.sendTransaction({
    to: unsignedTx.to,
    data: unsignedTx.data,
    value: BigInt(unsignedTx.value),
    gasLimit: unsignedTx.gas === undefined ? undefined : BigInt(unsignedTx.gas),
  });
  const receipt = await tx.wait();
  expect(receipt?.status).to.equal(1);
  return receipt!;
}

/** The on-chain task `id` holds exactly these terms, freshly funded. */
async function expectOnChain(
  escrow: TaskEscrow,
  id: number,
  want: {
    poster: string;
    token: string;
    amount: bigint;
    taskHash: string;
    locationZone: string;
    duration: number;
    verifier?: string;
  },
) {
  const t = await escrow.getTask(id);
  expect(t.poster).to.equal(want.poster);
  expect(t.worker).to.equal(ethers.ZeroAddress);
  expect(t.token).to.equal(want.token);
  expect(t.amount).to.equal(want.amount);
  expect(t.taskHash).to.equal(want.taskHash);
  expect(t.evidenceHash).to.equal(ZERO_HASH);
  expect(t.status).to.equal(BigInt(STATUS.Funded));
  expect(t.category).to.equal("general");
  expect(t.locationZone).to.equal(want.locationZone);
  expect(t.deadline - t.createdAt).to.equal(BigInt(want.duration));
  expect(t.submissionAttempts).to.equal(0n);
  expect(await escrow.taskVerifier(id)).to.equal(want.verifier ?? ethers.ZeroAddress);
}

function expectError(
  res: { status: number; json: { success: boolean; error: { code: string; message: string } } },
  status: number,
  code: string,
) {
  expect(res.json?.success, JSON.stringify(res.json)).to.equal(false);
  expect(res.json.error.code, res.json.error.message).to.equal(code);
  expect(res.status).to.equal(status);
}

describe("POST /api/v1/tasks", () => {
  describe("when the task is valid", () => {
    it("builds a createTask that the poster sends: the task exists with exactly the requested fields", () =>
      withApi(async ({ api, key, book, escrow, usdc, poster }) => {
        const body = task("single brief", { amount: "7250000", locationZone: "eu-west", duration: "7200" });
        const res = await api.request("POST", "/api/v1/tasks", { key, body: { ...body, token: book.token.address } });
        expect(res.status, res.text).to.equal(200);
        const { unsignedTx, chain, chainId } = res.json.data;
        expect(res.json.data).to.have.keys(["unsignedTx", "approveTx", "chain", "chainId"]);
        expect(res.json.data.approveTx, "the fixture approved the escrow without limit").to.equal(null);
        expect(unsignedTx).to.deep.equal({
          ...unsignedTx,
          to: book.escrow.proxy,
          from: poster.address.toLowerCase(),
          value: "0",
        });
        expect(unsignedTx).to.not.have.property("gas");
        expect(chain).to.equal("base");
        expect(chainId).to.equal(Number((await ethers.provider.getNetwork()).chainId));
        const call = escrow.interface.parseTransaction({ data: unsignedTx.data })!;
        expect(call.name).to.equal("createTask");

        await send(poster, unsignedTx);
        await expectOnChain(escrow, 1, {
          poster: poster.address,
          token: await usdc.getAddress(),
          amount: 7_250_000n,
          taskHash: body.taskHash,
          locationZone: "eu-west",
          duration: 7200,
        });
      }));

    it("answers approveTx, approve(escrow, exactly the reward) on the token, while the allowance falls short", () =>
      withApi(async ({ api, key, book, escrow, usdc, poster }) => {
        const escrowAddress = await escrow.getAddress();
        await (await usdc.connect(poster).approve(escrowAddress, 1_000_000n)).wait();
        const body = task("needs an approval", { amount: "7250000" });
        const res = await api.request("POST", "/api/v1/tasks", { key, body });
        expect(res.status, res.text).to.equal(200);
        const { approveTx, unsignedTx } = res.json.data;
        expect(approveTx).to.deep.include({ to: book.token.address, from: poster.address.toLowerCase(), value: "0" });
        const call = usdc.interface.parseTransaction({ data: approveTx.data })!;
        expect(call.name).to.equal("approve");
        expect(call.args[0]).to.equal(escrowAddress);
        expect(call.args[1]).to.equal(7_250_000n);

        await send(poster, approveTx);
        await send(poster, unsignedTx);
        expect(await usdc.allowance(poster.address, escrowAddress)).to.equal(0n); // exactly the reward was approved

        // An allowance that covers the reward needs no approval.
        await (await usdc.connect(poster).approve(escrowAddress, 7_250_000n)).wait();
        const again = await api.request("POST", "/api/v1/tasks", { key, body: task("covered", { amount: "7250000" }) });
        expect(again.json.data.approveTx).to.equal(null);
      }));

    it("answers approveTx in the first build after a block spent or lowered the allowance a build saw covering", () =>
      withApi(async ({ api, key, escrow, usdc, poster }) => {
        const escrowAddress = await escrow.getAddress();
        await (await usdc.connect(poster).approve(escrowAddress, 5_000_000n)).wait();
        const build = (text: string) => api.request("POST", "/api/v1/tasks", { key, body: task(text) });
        const first = await build("spends the allowance");
        expect(first.json.data.approveTx).to.equal(null);
        expect((await build("same block")).json.data.approveTx, "the allowance still covers it").to.equal(null);

        // Funding the first task spends the whole allowance (the escrow's transferFrom).
        await send(poster, first.json.data.unsignedTx);
        const spent = await build("after the funding");
        expect(spent.json.data.approveTx).to.deep.include({ to: await usdc.getAddress() });

        await (await usdc.connect(poster).approve(escrowAddress, 5_000_000n)).wait();
        expect((await build("approved again")).json.data.approveTx).to.equal(null);
        await (await usdc.connect(poster).approve(escrowAddress, 4_999_999n)).wait();
        const lowered = await build("after a lower approve");
        const call = usdc.interface.parseTransaction({ data: lowered.json.data.approveTx.data })!;
        expect([call.name, call.args[1]]).to.deep.equal(["approve", 5_000_000n]);
      }));

    it("builds createTaskWithVerifier when verifierAddress is present: the verifier is recorded on-chain", () =>
      withApi(async ({ api, key, escrow, usdc, poster, verifierAgent }) => {
        const body = task("verified brief", {
          verificationMode: "agent",
          verifierAddress: verifierAgent.address,
          wrappedKeys: { [verifierAgent.address]: "0xabcdef" },
          duration: 3 * DAY,
        });
        const res = await api.request("POST", "/api/v1/tasks", { key, body });
        expect(res.status, res.text).to.equal(200);
        const call = escrow.interface.parseTransaction({ data: res.json.data.unsignedTx.data })!;
        expect(call.name).to.equal("createTaskWithVerifier");

        await send(poster, res.json.data.unsignedTx);
        await expectOnChain(escrow, 1, {
          poster: poster.address,
          token: await usdc.getAddress(),
          amount: 5_000_000n,
          taskHash: body.taskHash,
          locationZone: "global",
          duration: 3 * DAY,
          verifier: verifierAgent.address,
        });
      }));

    it("uses the settlement token when token is omitted", () =>
      withApi(async ({ api, key, escrow, usdc }) => {
        const res = await api.request("POST", "/api/v1/tasks", { key, body: task("no token") });
        expect(res.status, res.text).to.equal(200);
        const call = escrow.interface.parseTransaction({ data: res.json.data.unsignedTx.data })!;
        expect(call.args.token).to.equal(await usdc.getAddress());
      }));

    it("accepts the bounds: duration 3600 and 7776000, amount 2^256 - 1, a Bearer key and the optional terms", () =>
      withApi(async ({ api, key, escrow }) => {
        for (const [i, overrides] of [
          { duration: HOUR },
          { duration: "7776000", amount: MAX_UINT256.toString() },
          {
            targetExecutorType: "human",
            verificationMode: "auto",
            verificationCriteria: { min_length: 10, regex_pattern: "^[a-z]+$" },
            requiredCapabilities: ["translation"],
            rootHash: "ab".repeat(32),
          },
        ].entries()) {
          const res = await api.request("POST", "/api/v1/tasks", {
            headers: { authorization: `Bearer ${key}` },
            body: task(`bounds ${i}`, overrides),
          });
          expect(res.status, res.text).to.equal(200);
          const call = escrow.interface.parseTransaction({ data: res.json.data.unsignedTx.data })!;
          if ("amount" in overrides) expect(call.args.amount).to.equal(MAX_UINT256);
          if ("duration" in overrides)
            expect(call.args.duration).to.equal(BigInt(overrides.duration as string | number));
        }
      }));
  });

  describe("when the body breaks a rule", () => {
    // [when, body overrides, code, what the message names]; every case answers 400.
    const cases: [string, Record<string, unknown>, string, string][] = [
      ["taskHash is missing", { taskHash: undefined }, "VALIDATION_ERROR", "body.taskHash"],
      ["taskHash is not 32 bytes", { taskHash: "0x1234" }, "VALIDATION_ERROR", "body.taskHash"],
      ["taskHash is zero", { taskHash: ZERO_HASH }, "EMPTY_HASH", "taskHash"],
      ["locationZone is missing", { locationZone: undefined }, "VALIDATION_ERROR", "body.locationZone"],
      ["locationZone is empty", { locationZone: "" }, "VALIDATION_ERROR", "body.locationZone"],
      [
        "locationZone is over 100 characters",
        { locationZone: "z".repeat(101) },
        "VALIDATION_ERROR",
        "body.locationZone",
      ],
      ["amount is missing", { amount: undefined }, "VALIDATION_ERROR", "body.amount"],
      ["amount is 0", { amount: "0" }, "INVALID_AMOUNT", "amount"],
      ["amount is the number 0 (not a string)", { amount: 0 }, "VALIDATION_ERROR", "body.amount"],
      ["amount is 1.5", { amount: "1.5" }, "INVALID_AMOUNT", "amount"],
      ["amount is negative", { amount: "-1" }, "INVALID_AMOUNT", "amount"],
      ["amount is 2^256", { amount: (1n << 256n).toString() }, "INVALID_AMOUNT", "amount"],
      ["duration is 3599", { duration: "3599" }, "INVALID_DURATION", "duration"],
      ["duration is 7776001", { duration: 7_776_001 }, "INVALID_DURATION", "duration"],
      ["duration is abc", { duration: "abc" }, "INVALID_DURATION", "duration"],
      ["duration is 0", { duration: "0" }, "INVALID_DURATION", "duration"],
      ["rootHash is not 64 hex or a blob id", { rootHash: "0x1234" }, "INVALID_HASH", "rootHash"],
      ["verifierAddress is not an address", { verifierAddress: "0x1234" }, "INVALID_VERIFIER", "verifierAddress"],
      ["verifierAddress is zero", { verifierAddress: ethers.ZeroAddress }, "INVALID_VERIFIER", "verifierAddress"],
      ["mode agent has no verifierAddress", { verificationMode: "agent" }, "NO_VERIFIER", "verifierAddress"],
      ["mode is oracle", { verificationMode: "oracle" }, "VERIFICATION_MODE_UNSUPPORTED", "oracle"],
      ["mode is unknown", { verificationMode: "vote" }, "VALIDATION_ERROR", "body.verificationMode"],
      ["mode auto has no criteria", { verificationMode: "auto" }, "AUTO_CRITERIA_REQUIRED", "verificationCriteria"],
      [
        "mode auto has no real rule",
        { verificationMode: "auto", verificationCriteria: { min_length: 0, contains_keywords: [" "] } },
        "AUTO_CRITERIA_REQUIRED",
        "verificationCriteria",
      ],
      [
        "regex_pattern can backtrack catastrophically",
        { verificationMode: "auto", verificationCriteria: { regex_pattern: "(a+)+$" } },
        "REGEX_PATTERN_UNUSABLE",
        "regex_pattern",
      ],
      [
        "regex_pattern does not compile",
        { verificationMode: "auto", verificationCriteria: { regex_pattern: "([" } },
        "REGEX_PATTERN_UNUSABLE",
        "regex_pattern",
      ],
      ["targetExecutorType is unknown", { targetExecutorType: "robot" }, "VALIDATION_ERROR", "body.targetExecutorType"],
      [
        "requiredCapabilities is not a list",
        { requiredCapabilities: "x" },
        "VALIDATION_ERROR",
        "body.requiredCapabilities",
      ],
      ["a wrappedKeys key is not an address", { wrappedKeys: { bob: "0xab" } }, "BAD_ADDRESS", "wrappedKeys"],
      [
        "a field is unknown (misspelt)",
        { verifierAdress: `0x${"11".repeat(20)}` },
        "VALIDATION_ERROR",
        "body.verifierAdress",
      ],
      ["token is not an address", { token: "usdc" }, "VALIDATION_ERROR", "body.token"],
    ];
    for (const [when, overrides, code, names] of cases) {
      it(`answers 400 ${code} naming the field when ${when}, and reserves nothing`, () =>
        withApi(async ({ api, key }) => {
          const res = await api.request("POST", "/api/v1/tasks", { key, body: task(`rule: ${when}`, overrides) });
          expectError(res, 400, code);
          expect(res.json.error.message).to.include(names);
          expect(await api.testDb.db("hash_reservations").count({ n: "*" }).first()).to.deep.include({ n: 0 });
        }));
    }

    it("answers 400 VALIDATION_ERROR when the body is not an object", () =>
      withApi(async ({ api, key }) => {
        const res = await api.request("POST", "/api/v1/tasks", { key, body: ["not", "an", "object"] });
        expectError(res, 400, "VALIDATION_ERROR");
        expect(res.json.error.message).to.include("body");
      }));

    it("answers 400 INVALID_VERIFIER when verifierAddress is the poster", () =>
      withApi(async ({ api, key, poster }) => {
        const res = await api.request("POST", "/api/v1/tasks", {
          key,
          body: task("self", { verifierAddress: poster.address }),
        });
        expectError(res, 400, "INVALID_VERIFIER");
        expect(res.json.error.message).to.include("verifierAddress");
      }));

    it("answers 400 VERIFIER_NOT_WRAPPED when the brief key is wrapped to others but not the verifier", () =>
      withApi(async ({ api, key, verifierAgent, worker }) => {
        const body = task("unwrapped", {
          verificationMode: "agent",
          verifierAddress: verifierAgent.address,
          wrappedKeys: { [worker.address]: "0xabcdef" },
        });
        const res = await api.request("POST", "/api/v1/tasks", { key, body });
        expectError(res, 400, "VERIFIER_NOT_WRAPPED");
        expect(res.json.error.message).to.include(verifierAgent.address.toLowerCase());
      }));

    it("answers 400 TOKEN_NOT_SETTLEMENT for a token other than the settlement token", () =>
      withApi(async ({ api, key, book, stranger }) => {
        const res = await api.request("POST", "/api/v1/tasks", {
          key,
          body: { ...task("other token"), token: stranger.address },
        });
        expectError(res, 400, "TOKEN_NOT_SETTLEMENT");
        expect(res.json.error.message).to.include(book.token.address);
      }));
  });

  describe("when the caller or the deployment cannot post", () => {
    it("answers 401 without a key, with a malformed key and with an unknown key", () =>
      withApi(async ({ api }) => {
        expectError(await api.request("POST", "/api/v1/tasks", { body: task("anon") }), 401, "UNAUTHORIZED");
        expectError(
          await api.request("POST", "/api/v1/tasks", { key: "sk_nope", body: task("anon") }),
          401,
          "UNAUTHORIZED",
        );
        const unknown = `sk_${"ab".repeat(32)}`;
        expectError(
          await api.request("POST", "/api/v1/tasks", { key: unknown, body: task("anon") }),
          401,
          "UNAUTHORIZED",
        );
      }));

    it("answers 503 CHAIN_NOT_CONFIGURED when the network has no deployment", () =>
      withApi(async ({ api, key }) => {
        api.deps.chain = undefined;
        const res = await api.request("POST", "/api/v1/tasks", { key, body: task("no chain") });
        expectError(res, 503, "CHAIN_NOT_CONFIGURED");
      }));
  });

  describe("hash reservations", () => {
    it("answers 409 TASK_HASH_TAKEN to another poster while the reservation runs", () =>
      withApi(async ({ api, key, stranger }) => {
        const body = task("contested");
        expect((await api.request("POST", "/api/v1/tasks", { key, body })).status).to.equal(200);
        const strangerKey = await api.createKey(stranger.address);
        const res = await api.request("POST", "/api/v1/tasks", { key: strangerKey, body });
        expectError(res, 409, "TASK_HASH_TAKEN");
        expect(res.json.error.message).to.include(body.taskHash);
      }));

    it("reserves the hash for HASH_RESERVATION_SECONDS (24 h by default) for the caller", () =>
      withApi(async ({ api, key, poster }) => {
        const body = task("reserved");
        const before = Math.floor(Date.now() / 1000);
        expect((await api.request("POST", "/api/v1/tasks", { key, body })).status).to.equal(200);
        const row = await findReservation(api.testDb.db, body.taskHash);
        expect(row?.poster).to.equal(poster.address.toLowerCase());
        expect(row!.expiresAt - row!.createdAt).to.equal(24 * 3600);
        expect(row!.createdAt).to.be.within(before, before + 5);
      }));

    it("refreshes the reservation when the same poster builds again", () =>
      withApi(async ({ api, key }) => {
        const body = task("rebuilt");
        expect((await api.request("POST", "/api/v1/tasks", { key, body })).status).to.equal(200);
        const first = await findReservation(api.testDb.db, body.taskHash);
        api.clock.advanceWall(2);
        expect((await api.request("POST", "/api/v1/tasks", { key, body })).status).to.equal(200);
        const second = await findReservation(api.testDb.db, body.taskHash);
        expect(second!.expiresAt).to.be.greaterThan(first!.expiresAt);
        expect(second!.createdAt).to.equal(first!.createdAt);
      }));

    it("lets another poster take the hash once the reservation expired", () =>
      withApi(
        async ({ api, key, stranger }) => {
          const body = task("expiring");
          expect((await api.request("POST", "/api/v1/tasks", { key, body })).status).to.equal(200);
          const strangerKey = await api.createKey(stranger.address);
          expectError(await api.request("POST", "/api/v1/tasks", { key: strangerKey, body }), 409, "TASK_HASH_TAKEN");

          const { expiresAt } = (await findReservation(api.testDb.db, body.taskHash))!;
          api.clock.advanceWall(expiresAt - api.clock.wallNow() + 1);
          expect((await api.request("POST", "/api/v1/tasks", { key: strangerKey, body })).status).to.equal(200);
          expect((await findReservation(api.testDb.db, body.taskHash))?.poster).to.equal(
            stranger.address.toLowerCase(),
          );
          expectError(await api.request("POST", "/api/v1/tasks", { key, body }), 409, "TASK_HASH_TAKEN");
        },
        { HASH_RESERVATION_SECONDS: "2" },
      ));

    it("gives exactly one of two concurrent builds by different posters the hash", () =>
      withApi(async ({ api, key, poster, stranger }) => {
        const strangerKey = await api.createKey(stranger.address);
        for (let round = 0; round < 6; round++) {
          const body = task(`race ${round}`);
          const results = await Promise.all([
            api.request("POST", "/api/v1/tasks", { key, body }),
            api.request("POST", "/api/v1/tasks", { key: strangerKey, body }),
          ]);
          const statuses = results.map((r) => r.status).sort();
          expect(statuses).to.deep.equal([200, 409]);
          const loser = results.find((r) => r.status === 409)!;
          expect(loser.json.error.code).to.equal("TASK_HASH_TAKEN");
          const winner = results[0].status === 200 ? poster : stranger;
          expect((await findReservation(api.testDb.db, body.taskHash))?.poster).to.equal(winner.address.toLowerCase());
        }
      }));

    it("claims atomically: of many concurrent claims from separate connection pools exactly one wins", () =>
      withApi(async ({ api, others }) => {
        const pools = others.slice(0, 6).map(() => api.testDb.reopen());
        const now = Math.floor(Date.now() / 1000);
        for (let round = 0; round < 3; round++) {
          const taskHash = brief(`pool race ${round}`);
          const results = await Promise.all(
            pools.map((db, i) => claimHash(db, { taskHash, poster: others[i].address, now, ttlSeconds: 60 })),
          );
          expect(results.filter((r) => r.claimed)).to.have.length(1);
          const winner = results.findIndex((r) => r.claimed);
          for (const r of results)
            if (!r.claimed) expect(r.holder?.poster).to.equal(others[winner].address.toLowerCase());
        }
      }));

    it("checks the market and claims a free hash in one statement", () =>
      withApi(async ({ api, key }) => {
        const hashStatements: string[] = [];
        const onQuery = (query: { sql: string }) => {
          if (/"(hash_reservations|listings|tasks)"/.test(query.sql)) hashStatements.push(query.sql);
        };
        api.testDb.db.client.on("query", onQuery);
        try {
          expect((await api.request("POST", "/api/v1/tasks", { key, body: task("one statement") })).status).to.equal(
            200,
          );
        } finally {
          api.testDb.db.client.removeListener("query", onQuery);
        }
        expect(hashStatements).to.have.length(1);
        expect(hashStatements[0]).to.match(/^insert into "hash_reservations"/);
      }));

    it("reserves nothing for a hash already on the market", () =>
      withApi(async ({ api, key, stranger }) => {
        const listed = task("listed, not reserved");
        await api.testDb.db("listings").insert({
          task_id: 98,
          task_hash: listed.taskHash,
          chain: "base",
          poster: stranger.address.toLowerCase(),
          tx_hash: ZERO_HASH,
          privacy: "private",
          verification_mode: "manual",
          listed_at: Math.floor(Date.now() / 1000),
        });
        expectError(await api.request("POST", "/api/v1/tasks", { key, body: listed }), 409, "TASK_HASH_IN_USE");
        expect(await findReservation(api.testDb.db, listed.taskHash)).to.equal(undefined);
      }));

    it("answers TASK_HASH_IN_USE rather than TASK_HASH_TAKEN for a hash both reserved by another poster and listed", () =>
      withApi(async ({ api, key, stranger }) => {
        const body = task("reserved then listed");
        const strangerKey = await api.createKey(stranger.address);
        expect((await api.request("POST", "/api/v1/tasks", { key: strangerKey, body })).status).to.equal(200);
        await api.testDb.db("listings").insert({
          task_id: 97,
          task_hash: body.taskHash,
          chain: "base",
          poster: stranger.address.toLowerCase(),
          tx_hash: ZERO_HASH,
          privacy: "private",
          verification_mode: "manual",
          listed_at: Math.floor(Date.now() / 1000),
        });
        const res = await api.request("POST", "/api/v1/tasks", { key, body });
        expectError(res, 409, "TASK_HASH_IN_USE");
        expect(res.json.error.message).to.include("task 97");
        expect((await findReservation(api.testDb.db, body.taskHash))?.poster).to.equal(stranger.address.toLowerCase());
      }));

    it("answers 409 TASK_HASH_IN_USE, to the poster and to others, once a task with the hash is funded and indexed", () =>
      withApi(async ({ api, key, poster, stranger }) => {
        const body = task("funded");
        const built = await api.request("POST", "/api/v1/tasks", { key, body });
        await send(poster, built.json.data.unsignedTx);
        await api.synced();

        expectError(await api.request("POST", "/api/v1/tasks", { key, body }), 409, "TASK_HASH_IN_USE");
        const strangerKey = await api.createKey(stranger.address);
        const res = await api.request("POST", "/api/v1/tasks", { key: strangerKey, body });
        expectError(res, 409, "TASK_HASH_IN_USE");
        expect(res.json.error.message).to.include("task 1");
      }));

    it("answers 409 TASK_HASH_IN_USE for a hash funded directly on the escrow, or listed", () =>
      withApi(async ({ api, key, escrow, usdc, stranger }) => {
        const funded = task("funded elsewhere");
        await escrow
          .connect(stranger)
          .createTask(funded.taskHash, await usdc.getAddress(), 1_000_000n, "general", "global", DAY);
        await api.synced();
        expectError(await api.request("POST", "/api/v1/tasks", { key, body: funded }), 409, "TASK_HASH_IN_USE");

        const listed = task("listed");
        await api.testDb.db("listings").insert({
          task_id: 99,
          task_hash: listed.taskHash,
          chain: "base",
          poster: stranger.address.toLowerCase(),
          tx_hash: ZERO_HASH,
          privacy: "private",
          verification_mode: "manual",
          listed_at: Math.floor(Date.now() / 1000),
        });
        const res = await api.request("POST", "/api/v1/tasks", { key, body: listed });
        expectError(res, 409, "TASK_HASH_IN_USE");
        expect(res.json.error.message).to.include("task 99");
      }));
  });
});

describe("POST /api/v1/tasks/batch", () => {
  describe("when every task is valid", () => {
    it("builds a createTasks that the poster sends: each task exists with exactly its fields, in order", () =>
      withApi(async ({ api, key, book, escrow, usdc, poster, verifierAgent }) => {
        const tasks = [
          task("batch a", { amount: "1000000", locationZone: "global", duration: HOUR }),
          task("batch b", {
            amount: "2500000",
            locationZone: "us-east",
            duration: String(2 * DAY),
            verificationMode: "agent",
            verifierAddress: verifierAgent.address,
          }),
          task("batch c", {
            amount: "42",
            locationZone: "apac",
            duration: "7776000",
            verificationMode: "auto",
            verificationCriteria: { contains_keywords: ["done"] },
          }),
        ];
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks },
        });
        expect(res.status, res.text).to.equal(200);
        const { unsignedTx, chain, chainId, taskHashes } = res.json.data;
        expect(taskHashes).to.deep.equal(tasks.map((t) => t.taskHash));
        expect(chain).to.equal("base");
        expect(chainId).to.equal(book.chainId);
        expect(unsignedTx.to).to.equal(book.escrow.proxy);
        expect(unsignedTx.value).to.equal("0");
        const call = escrow.interface.parseTransaction({ data: unsignedTx.data })!;
        expect(call.name).to.equal("createTasks");
        expect(call.args.token).to.equal(await usdc.getAddress());
        expect(call.args.tasks.map((t: { category: string }) => t.category)).to.deep.equal([
          "general",
          "general",
          "general",
        ]);

        // The gas limit is the caller's estimate plus one fifth.
        const estimate = await ethers.provider.estimateGas({
          from: poster.address,
          to: unsignedTx.to,
          data: unsignedTx.data,
        });
        expect(BigInt(unsignedTx.gas)).to.equal(estimate + estimate / 5n);

        await send(poster, unsignedTx);
        const token = await usdc.getAddress();
        await expectOnChain(escrow, 1, {
          poster: poster.address,
          token,
          amount: 1_000_000n,
          taskHash: tasks[0].taskHash,
          locationZone: "global",
          duration: HOUR,
        });
        await expectOnChain(escrow, 2, {
          poster: poster.address,
          token,
          amount: 2_500_000n,
          taskHash: tasks[1].taskHash,
          locationZone: "us-east",
          duration: 2 * DAY,
          verifier: verifierAgent.address,
        });
        await expectOnChain(escrow, 3, {
          poster: poster.address,
          token,
          amount: 42n,
          taskHash: tasks[2].taskHash,
          locationZone: "apac",
          duration: 7_776_000,
        });
        expect(await escrow.nextTaskId()).to.equal(4n);
      }));

    it("answers approveTx for the batch's sum while the allowance falls short, and null once it covers it", () =>
      withApi(async ({ api, key, book, escrow, usdc, poster }) => {
        const escrowAddress = await escrow.getAddress();
        await (await usdc.connect(poster).approve(escrowAddress, 0n)).wait();
        const tasks = [task("sum a", { amount: "1000000" }), task("sum b", { amount: "2500000" })];
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks },
        });
        expect(res.status, res.text).to.equal(200);
        const { approveTx, unsignedTx } = res.json.data;
        expect(approveTx).to.deep.include({ to: book.token.address, from: poster.address.toLowerCase(), value: "0" });
        const call = usdc.interface.parseTransaction({ data: approveTx.data })!;
        expect([call.name, call.args[0], call.args[1]]).to.deep.equal(["approve", escrowAddress, 3_500_000n]);
        await send(poster, approveTx);
        await send(poster, unsignedTx);
        expect(await escrow.nextTaskId()).to.equal(3n);

        await (await usdc.connect(poster).approve(escrowAddress, 3_500_000n)).wait();
        const covered = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks: [task("sum c", { amount: "3500000" })] },
        });
        expect(covered.json.data.approveTx).to.equal(null);
      }));

    it("reserves every hash of the batch for the caller", () =>
      withApi(async ({ api, key, book, poster, stranger }) => {
        const tasks = [task("reserve 1"), task("reserve 2")];
        expect(
          (await api.request("POST", "/api/v1/tasks/batch", { key, body: { token: book.token.address, tasks } }))
            .status,
        ).to.equal(200);
        for (const t of tasks)
          expect((await findReservation(api.testDb.db, t.taskHash))?.poster).to.equal(poster.address.toLowerCase());
        const strangerKey = await api.createKey(stranger.address);
        expectError(
          await api.request("POST", "/api/v1/tasks", { key: strangerKey, body: tasks[1] }),
          409,
          "TASK_HASH_TAKEN",
        );
      }));

    it("falls back to the size-based gas limit when estimating fails (no approval yet), and that limit suffices", () =>
      withApi(async ({ api, key, book, escrow, usdc, poster }) => {
        await usdc.connect(poster).approve(await escrow.getAddress(), 0);
        const one = [task("cold first")];
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks: one },
        });
        expect(res.status, res.text).to.equal(200);
        const calls: TaskCall[] = [
          { taskHash: one[0].taskHash, amount: 5_000_000n, locationZone: "global", duration: DAY },
        ];
        expect(res.json.data.unsignedTx.gas).to.equal(withMargin(createTasksGasFallback(calls)).toString());

        await usdc.connect(poster).approve(await escrow.getAddress(), 5_000_000n);
        const receipt = await send(poster, res.json.data.unsignedTx);
        expect(receipt.gasUsed < BigInt(res.json.data.unsignedTx.gas)).to.equal(true);
        expect((await escrow.getTask(1)).taskHash).to.equal(one[0].taskHash);
      }));

    it("gives a fallback that suffices for a heavy batch: 50 tasks with verifiers and 100-character zones", () =>
      withApi(async ({ api, key, book, escrow, usdc, poster, verifierAgent }) => {
        await usdc.connect(poster).approve(await escrow.getAddress(), 0);
        const zone = "z".repeat(100);
        const tasks = Array.from({ length: 50 }, (_, i) =>
          task(`heavy ${i}`, { locationZone: zone, verificationMode: "agent", verifierAddress: verifierAgent.address }),
        );
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks },
        });
        expect(res.status, res.text).to.equal(200);
        const gas = BigInt(res.json.data.unsignedTx.gas);
        const calls = tasks.map((t) => ({
          ...t,
          amount: 5_000_000n,
          duration: DAY,
          verifierAgent: verifierAgent.address,
        }));
        expect(gas).to.equal(withMargin(createTasksGasFallback(calls)));

        await usdc.connect(poster).approve(await escrow.getAddress(), 50n * 5_000_000n);
        const receipt = await send(poster, res.json.data.unsignedTx);
        expect(receipt.gasUsed < gas).to.equal(true);
        expect(await escrow.nextTaskId()).to.equal(51n);
        expect((await escrow.getTask(50)).locationZone).to.equal(zone);
      }));

    it("caps the gas limit at the per-transaction cap (EIP-7825) when one fifth more would exceed it", () =>
      withApi(async ({ api, key, book, escrow, poster, verifierAgent }) => {
        // 66 three-byte characters: labels of 207 bytes, seven storage slots per task; about 14.2M gas in all.
        const zone = "€".repeat(66);
        const tasks = Array.from({ length: 50 }, (_, i) =>
          task(`capped ${i}`, {
            locationZone: zone,
            verificationMode: "agent",
            verifierAddress: verifierAgent.address,
          }),
        );
        const calls = tasks.map((t) => ({
          ...t,
          amount: 5_000_000n,
          duration: DAY,
          verifierAgent: verifierAgent.address,
        }));
        const needed = createTasksGasFallback(calls);
        expect(needed <= TX_GAS_CAP && needed + needed / 5n > TX_GAS_CAP).to.equal(true);

        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks },
        });
        expect(res.status, res.text).to.equal(200);
        expect(BigInt(res.json.data.unsignedTx.gas)).to.equal(TX_GAS_CAP);
        const receipt = await send(poster, res.json.data.unsignedTx);
        expect(receipt.gasUsed < TX_GAS_CAP).to.equal(true);
        expect(await escrow.nextTaskId()).to.equal(51n);
      }));

    it("counts one build per task against the wallet's builds bucket", () =>
      withApi(
        async ({ api, key, book }) => {
          const batch = (n: number, tag: string) => ({
            token: book.token.address,
            tasks: Array.from({ length: n }, (_, i) => task(`${tag} ${i}`)),
          });
          const over = await api.request("POST", "/api/v1/tasks/batch", { key, body: batch(4, "over") });
          expectError(over, 429, "RATE_LIMIT");
          expect(over.json.error.message).to.include("task builds");
          expect((await api.request("POST", "/api/v1/tasks/batch", { key, body: batch(3, "fits") })).status).to.equal(
            200,
          );
          expectError(await api.request("POST", "/api/v1/tasks", { key, body: task("one more") }), 429, "RATE_LIMIT");
        },
        { RATE_WALLET_FAMILY_PER_MINUTE: "3" },
      ));
  });

  describe("when the batch as a whole is refused", () => {
    it("answers 400 BATCH_TOO_LARGE for 51 tasks", () =>
      withApi(async ({ api, key, book }) => {
        const tasks = Array.from({ length: 51 }, (_, i) => task(`too many ${i}`));
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks },
        });
        expectError(res, 400, "BATCH_TOO_LARGE");
        expect(res.json.error.message).to.include("body.tasks");
      }));

    it("answers 400 BATCH_TOO_LARGE above the escrow's maximum batch", () =>
      withApi(async ({ api, key, book }) => {
        api.deps.chain!.maxBatch = async () => 2;
        const tasks = [task("max 1"), task("max 2"), task("max 3")];
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks },
        });
        expectError(res, 400, "BATCH_TOO_LARGE");
        expect(res.json.error.message).to.include("at most 2");
        expect(await api.testDb.db("hash_reservations").count({ n: "*" }).first()).to.deep.include({ n: 0 });
      }));

    it("answers 400 BATCH_TOO_LARGE when the batch needs more gas than one transaction may take, reserving nothing", () =>
      withApi(async ({ api, key, book, verifierAgent }) => {
        const tasks = Array.from({ length: 50 }, (_, i) =>
          task(`too heavy ${i}`, {
            locationZone: "€".repeat(100),
            verificationMode: "agent",
            verifierAddress: verifierAgent.address,
          }),
        );
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks },
        });
        expectError(res, 400, "BATCH_TOO_LARGE");
        expect(res.json.error.message).to.include(String(TX_GAS_CAP));
        expect(await api.testDb.db("hash_reservations").count({ n: "*" }).first()).to.deep.include({ n: 0 });
      }));

    it("answers 409 BATCH_UNSUPPORTED when the escrow has no batch create", () =>
      withApi(async ({ api, key, book }) => {
        api.deps.chain!.maxBatch = async () => null;
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks: [task("unsupported")] },
        });
        expectError(res, 409, "BATCH_UNSUPPORTED");
      }));

    it("answers 400 VALIDATION_ERROR naming the field for an empty batch, a missing token or tasks not a list", () =>
      withApi(async ({ api, key, book }) => {
        const empty = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks: [] },
        });
        expectError(empty, 400, "VALIDATION_ERROR");
        expect(empty.json.error.message).to.include("body.tasks");
        const noToken = await api.request("POST", "/api/v1/tasks/batch", { key, body: { tasks: [task("no token")] } });
        expectError(noToken, 400, "VALIDATION_ERROR");
        expect(noToken.json.error.message).to.include("body.token");
        const notList = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks: task("x") },
        });
        expectError(notList, 400, "VALIDATION_ERROR");
        expect(notList.json.error.message).to.include("body.tasks");
      }));

    it("answers 400 TOKEN_NOT_SETTLEMENT for another token", () =>
      withApi(async ({ api, key, stranger }) => {
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: stranger.address, tasks: [task("t")] },
        });
        expectError(res, 400, "TOKEN_NOT_SETTLEMENT");
      }));

    it("answers 401 without a valid key", () =>
      withApi(async ({ api, book }) => {
        const body = { token: book.token.address, tasks: [task("anon")] };
        expectError(await api.request("POST", "/api/v1/tasks/batch", { body }), 401, "UNAUTHORIZED");
        expectError(
          await api.request("POST", "/api/v1/tasks/batch", { key: `sk_${"cd".repeat(32)}`, body }),
          401,
          "UNAUTHORIZED",
        );
      }));

    it("answers 503 CHAIN_NOT_CONFIGURED when the network has no deployment", () =>
      withApi(async ({ api, key, book }) => {
        api.deps.chain = undefined;
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks: [task("c")] },
        });
        expectError(res, 503, "CHAIN_NOT_CONFIGURED");
      }));
  });

  describe("when some tasks are refused (all or nothing)", () => {
    it("answers 400 INVALID_TASKS listing every refused task by index, and reserves nothing", () =>
      withApi(async ({ api, key, book, poster, stranger }) => {
        const tasks: unknown[] = [
          task("ok 0"),
          task("bad amount", { amount: "1.5" }),
          task("ok 2"),
          task("ok 0"),
          task("oracle", { verificationMode: "oracle" }),
          { ...task("with token"), token: book.token.address },
          task("self verifier", { verifierAddress: poster.address }),
          "not a task",
          task("short", { duration: "3599" }),
          task("zero", { taskHash: ZERO_HASH }),
          task("regex", { verificationMode: "auto", verificationCriteria: { regex_pattern: "(a+)+$" } }),
        ];
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks },
        });
        expectError(res, 400, "INVALID_TASKS");
        const errors: { index: number; code: string; message: string }[] = res.json.error.details.errors;
        expect(errors.map((e) => [e.index, e.code])).to.deep.equal([
          [1, "INVALID_AMOUNT"],
          [3, "TASK_HASH_IN_USE"],
          [4, "VERIFICATION_MODE_UNSUPPORTED"],
          [5, "VALIDATION_ERROR"],
          [6, "INVALID_VERIFIER"],
          [7, "VALIDATION_ERROR"],
          [8, "INVALID_DURATION"],
          [9, "EMPTY_HASH"],
          [10, "REGEX_PATTERN_UNUSABLE"],
        ]);
        for (const e of errors) expect(e.message).to.match(new RegExp(`^task ${e.index + 1}: `));
        expect(errors[1].message).to.include("task 1");
        expect(errors[3].message).to.include("token");

        expect(await api.testDb.db("hash_reservations").count({ n: "*" }).first()).to.deep.include({ n: 0 });
        const strangerKey = await api.createKey(stranger.address);
        expect((await api.request("POST", "/api/v1/tasks", { key: strangerKey, body: task("ok 0") })).status).to.equal(
          200,
        );
      }));

    it("releases the claims it took when one task's hash is reserved by another poster", () =>
      withApi(async ({ api, key, book, stranger }) => {
        const strangerKey = await api.createKey(stranger.address);
        expect((await api.request("POST", "/api/v1/tasks", { key: strangerKey, body: task("h2") })).status).to.equal(
          200,
        );

        const tasks = [task("h1"), task("h2"), task("h3")];
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks },
        });
        expectError(res, 400, "INVALID_TASKS");
        expect(
          res.json.error.details.errors.map((e: { index: number; code: string }) => [e.index, e.code]),
        ).to.deep.equal([[1, "TASK_HASH_TAKEN"]]);
        expect(await findReservation(api.testDb.db, tasks[0].taskHash)).to.equal(undefined);
        expect(await findReservation(api.testDb.db, tasks[2].taskHash)).to.equal(undefined);
        expect((await findReservation(api.testDb.db, tasks[1].taskHash))?.poster).to.equal(
          stranger.address.toLowerCase(),
        );
        expect((await api.request("POST", "/api/v1/tasks", { key: strangerKey, body: tasks[0] })).status).to.equal(200);
      }));

    it("keeps, unchanged, a reservation the poster held before the refused batch", () =>
      withApi(async ({ api, key, book, poster }) => {
        const held = task("held");
        expect((await api.request("POST", "/api/v1/tasks", { key, body: held })).status).to.equal(200);
        const before = await findReservation(api.testDb.db, held.taskHash);
        api.clock.advanceWall(2);
        const tasks = [held, task("refused", { amount: "0" })];
        expectError(
          await api.request("POST", "/api/v1/tasks/batch", { key, body: { token: book.token.address, tasks } }),
          400,
          "INVALID_TASKS",
        );
        const after = await findReservation(api.testDb.db, held.taskHash);
        expect(after).to.deep.equal(before);
        expect(after?.poster).to.equal(poster.address.toLowerCase());
      }));

    it("refuses a task whose hash was funded and indexed with TASK_HASH_IN_USE at its index", () =>
      withApi(async ({ api, key, book, poster }) => {
        const first = [task("first 1"), task("first 2")];
        const built = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks: first },
        });
        await send(poster, built.json.data.unsignedTx);
        await api.synced();

        const again = [task("fresh"), first[1]];
        const res = await api.request("POST", "/api/v1/tasks/batch", {
          key,
          body: { token: book.token.address, tasks: again },
        });
        expectError(res, 400, "INVALID_TASKS");
        expect(res.json.error.details.errors).to.deep.equal([
          {
            index: 1,
            code: "TASK_HASH_IN_USE",
            message: `task 2: taskHash ${first[1].taskHash} is already on the market (task 2 on base): upload a new brief`,
          },
        ]);
        expect(await findReservation(api.testDb.db, again[0].taskHash)).to.equal(undefined);
      }));

    it("lets exactly one of two overlapping batches by different posters win, without deadlock", () =>
      withApi(async ({ api, key, book, poster, stranger }) => {
        const strangerKey = await api.createKey(stranger.address);
        for (let round = 0; round < 4; round++) {
          const tasks = [task(`overlap ${round} a`), task(`overlap ${round} b`), task(`overlap ${round} c`)];
          const results = await Promise.all([
            api.request("POST", "/api/v1/tasks/batch", { key, body: { token: book.token.address, tasks } }),
            api.request("POST", "/api/v1/tasks/batch", {
              key: strangerKey,
              body: { token: book.token.address, tasks: [...tasks].reverse() },
            }),
          ]);
          expect(results.map((r) => r.status).sort()).to.deep.equal([200, 400]);
          const loser = results.find((r) => r.status === 400)!;
          expect(loser.json.error.code).to.equal("INVALID_TASKS");
          expect(loser.json.error.details.errors.map((e: { code: string }) => e.code)).to.deep.equal([
            "TASK_HASH_TAKEN",
            "TASK_HASH_TAKEN",
            "TASK_HASH_TAKEN",
          ]);
          const winner = results[0].status === 200 ? poster : stranger;
          for (const t of tasks) {
            expect((await findReservation(api.testDb.db, t.taskHash))?.poster).to.equal(winner.address.toLowerCase());
          }
        }
      }));
  });
});

describe("task build routes in the OpenAPI document", () => {
  it("documents both bodies, the batch entries as TaskBuildTerms", () =>
    withApi(async ({ api }) => {
      const res = await api.request("GET", "/api/v1/openapi.json");
      const doc = res.json;
      expect(doc.paths["/api/v1/tasks"].post.requestBody.content["application/json"].schema.$ref).to.equal(
        "#/components/schemas/TaskBuildBody",
      );
      const batch = doc.components.schemas.TaskBatchBuildBody;
      expect(batch.properties.tasks.items.$ref).to.equal("#/components/schemas/TaskBuildTerms");
      expect(batch.properties.tasks.maxItems).to.equal(50);
      expect(doc.components.schemas.TaskBuildTerms.required).to.have.members([
        "taskHash",
        "amount",
        "locationZone",
        "duration",
      ]);
    }));
});
