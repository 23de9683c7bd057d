/**
 * The Redis limit store (server/limits/store.ts) sends its scripts by SHA1 (EVALSHA), falling back to the script's
 * text only when the server does not hold it; its counts are those of the script. Skipped when REDIS_URL is not set.
 */
import crypto from "node:crypto";
import { expect } from "chai";
import { RedisLimitStore } from "../../../server/limits/store";

/** The command names the store's client sends (ioredis's sendCommand, which every command goes through). */
function sentCommands(store: RedisLimitStore): string[] {
  const client = (store as unknown as { redis: { sendCommand: (command: { name: string }) => unknown } }).redis;
  const names: string[] = [];
  const send = client.sendCommand.bind(client);
  client.sendCommand = (command) => {
    names.push(command.name);
    return send(command);
  };
  return names;
}

describe("RedisLimitStore (server/limits/store.ts)", () => {
  let store: RedisLimitStore;

  before(function () {
    if (!process.env.REDIS_URL) this.skip();
  });
  beforeEach(() => {
    store = new RedisLimitStore(process.env.REDIS_URL!, `test-rl-${crypto.randomBytes(4).toString("hex")}:`);
  });
  afterEach(() => store?.close());

  it("counts a window and takes from buckets by the scripts' SHA1, never sending their text again", async () => {
    const names = sentCommands(store);
    expect((await store.hitWindow("ip", 60_000)).count).to.equal(1);
    expect((await store.hitWindow("ip", 60_000, 2)).count).to.equal(3);
    expect((await store.peekWindow("ip", 60_000)).count).to.equal(3);
    const bucket = { key: "wallet", capacity: 10, refillMs: 60_000 };
    expect((await store.take([bucket], 4))[0]).to.include({ ok: true, retryAfterMs: 0 });
    const [refused] = await store.take([bucket], 7);
    expect(refused.ok).to.equal(false);
    expect(refused.retryAfterMs).to.be.greaterThan(0);
    // Each script's text goes at most once (when this server did not hold it yet): every later call is EVALSHA.
    expect(names.filter((n) => n === "eval").length).to.be.at.most(2);
    expect(names.slice(-3)).to.deep.equal(["evalsha", "evalsha", "evalsha"]);
    expect(names.filter((n) => n === "evalsha").length).to.be.at.least(3);
  });
});
