/** The pure parts of server/domain/events/webhooks.ts: the address policy, the back-off and the signature. */
import crypto from "node:crypto";
import { expect } from "chai";
import {
  checkWebhookUrl,
  isPublicAddress,
  publicOnlyLookup,
  retryDelayMs,
  signatureHeader,
  webhookSignature,
} from "../../../../server/domain/events/webhooks";
import { AppError } from "../../../../server/errors";

describe("webhooks: addresses, back-off, signature", () => {
  it("tells public addresses from loopback, private, shared, link-local, multicast and reserved ones", () => {
    for (const ip of ["93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700::1111", "2001:4860:4860::8888"]) {
      expect(isPublicAddress(ip), ip).to.equal(true);
    }
    for (const ip of [
      "127.0.0.1",
      "127.255.0.9",
      "10.0.0.1",
      "172.16.5.4",
      "172.31.255.255",
      "192.168.0.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "192.0.2.1",
      "::1",
      "::",
      "fe80::1",
      "fd12:3456::1",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "::ffff:8.8.8.8",
      "::ffff:a00:1",
      "64:ff9b::808:808",
      "2002:808:808::1",
      "2001:0:4136:e378::1",
      "not an ip",
    ]) {
      expect(isPublicAddress(ip), ip).to.equal(false);
    }
    expect(isPublicAddress("172.32.0.1")).to.equal(true);
  });

  it("checks URLs without resolving literal addresses, naming the url field", async () => {
    const refused = async (url: string, code: string) => {
      try {
        await checkWebhookUrl(url, false);
        expect.fail(`${url} was accepted`);
      } catch (error) {
        expect(error).to.be.instanceOf(AppError);
        expect((error as AppError).code, url).to.equal(code);
        expect((error as AppError).message).to.match(/^url: /);
      }
    };
    await refused("http://10.0.0.8/x", "WEBHOOK_URL_NOT_PUBLIC");
    await refused("http://[::1]/x", "WEBHOOK_URL_NOT_PUBLIC");
    await refused("http://localhost/x", "WEBHOOK_URL_NOT_PUBLIC");
    await refused("ws://93.184.216.34/x", "VALIDATION_ERROR");
    expect((await checkWebhookUrl("https://93.184.216.34/hook", false)).hostname).to.equal("93.184.216.34");
    expect((await checkWebhookUrl("http://127.0.0.1:9/hook", true)).port).to.equal("9");
  });

  it("refuses, at connection time, a host name that resolves to a non-public address (both lookup forms)", async () => {
    for (const options of [{}, { all: true }]) {
      const error = await new Promise<Error | null>((resolve) =>
        publicOnlyLookup("localhost", options, (e: Error | null) => resolve(e)),
      );
      expect(error?.message).to.match(/^localhost resolved to .+, not a public address$/);
    }
  });

  it("waits base, 2 x base, 4 x base ... capped", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, 10_000, 60_000))).to.deep.equal([
      10_000, 20_000, 40_000, 60_000, 60_000, 60_000,
    ]);
  });

  it("signs HMAC-SHA256 over '<t>.<body>' with the whole secret as the key", () => {
    const secret = "whsec_" + "11".repeat(32);
    const body = '{"id":"1","type":"task.listed"}';
    const expected = crypto.createHmac("sha256", secret).update(`1700000000.${body}`).digest("hex");
    expect(webhookSignature(secret, 1700000000, body)).to.equal(expected);
    expect(signatureHeader(secret, 1700000000, body)).to.equal(`t=1700000000,v1=${expected}`);
  });
});
