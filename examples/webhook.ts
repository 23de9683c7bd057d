/**
 * React to a webhook: receive the service's signed event deliveries and verify each one.
 *
 * The script listens on http://127.0.0.1:$WEBHOOK_PORT/hook, registers that URL (`api.createWebhook`, i.e.
 * `POST /api/v1/webhooks`; the secret is answered once), posts a public task the devnet's example agent takes, and ends when a verified
 * `task.settled` delivery says the task was paid. Every delivery carries
 *
 *     X-Market-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 *
 * `verifySignature` below is the whole check a receiver makes (any language: HMAC-SHA256 over the timestamp, a dot
 * and the raw body bytes, compared in constant time, with a bound on the timestamp's age against replays).
 * A service without webhooks answers 404 NOT_FOUND to the registration: the example fails, loudly.
 *
 *     WEBHOOK_PORT=18760 node -r ts-node/register/transpile-only examples/webhook.ts   (see examples/env.ts)
 */
import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { isMarketError, postTask, type MarketEventData } from "../client/sdk/index";
import { run, setup } from "./env";

/** The receiver's check: the signature of `<t>.<body>` under the secret, made at most `toleranceSeconds` ago. */
export function verifySignature(secret: string, header: string | undefined, rawBody: Buffer, toleranceSeconds = 300) {
  const parts = Object.fromEntries((header ?? "").split(",").map((kv) => kv.trim().split("=", 2) as [string, string]));
  const timestamp = Number(parts.t);
  if (!Number.isInteger(timestamp) || !/^[0-9a-f]{64}$/.test(parts.v1 ?? "")) return false;
  if (Math.abs(Date.now() / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = crypto.createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest();
  return crypto.timingSafeEqual(expected, Buffer.from(parts.v1, "hex"));
}

run(async () => {
  const { api, wallet, provider } = setup();
  let secret = "";
  let settled: (event: MarketEventData) => void = () => undefined;
  const paid = new Promise<MarketEventData>((resolve) => (settled = resolve));
  let taskHash = "";
  let refused = 0;

  // 1. The receiver: answer 2xx fast (anything else is retried), verify before trusting the body.
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (!verifySignature(secret, req.headers["x-market-signature"] as string | undefined, body)) {
        refused++;
        res.writeHead(401).end();
        console.log("  refused a delivery with a bad signature");
        return;
      }
      res.writeHead(204).end();
      const event = JSON.parse(body.toString("utf8")) as MarketEventData;
      console.log(`  delivery ${req.headers["x-market-delivery"]}: ${event.type} ${event.taskHash} -> ${event.state}`);
      if (event.type === "task.settled" && event.taskHash === taskHash) settled(event);
    });
  });
  await new Promise<void>((resolve) => server.listen(Number(process.env.WEBHOOK_PORT ?? 0), "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

  // 2. Register it: the secret is answered once.
  let hook: { id: number; secret: string };
  try {
    hook = await api.createWebhook({ url });
  } catch (error) {
    server.close();
    if (isMarketError(error, "NOT_FOUND")) {
      throw new Error(`this service has no /api/v1/webhooks (404): ${error.message}`, { cause: error });
    }
    throw error;
  }
  secret = hook.secret;
  console.log(`webhook ${hook.id} registered for ${url}`);

  try {
    // 3. Something to hear about: a public task the devnet's example agent takes and gets paid for.
    const posted = await postTask(
      {
        brief: `Summarise: webhooks push each change of a task to the poster. (${new Date().toISOString()})`,
        privacy: "public",
        amount: 1_000_000n,
        duration: 3600,
        verificationMode: "auto",
        verificationCriteria: { required_fields: ["summary"] },
        requiredCapabilities: ["summarise"],
      },
      { api, signer: wallet },
    );
    taskHash = posted.taskHash;
    console.log(`posted ${taskHash}; waiting for its task.settled delivery`);

    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("no verified task.settled delivery within 90 s")), 90_000).unref(),
    );
    const event = await Promise.race([paid, timeout]);
    if (event.outcome !== "paid") throw new Error(`the task settled ${event.outcome}, not paid`);
    if (refused > 0) throw new Error(`${refused} delivery(ies) failed the signature check`);
    console.log(`verified: task ${taskHash} paid (tx ${event.txHash})`);
  } finally {
    await api.deleteWebhook(hook.id);
    server.close();
    provider.destroy();
  }
});
