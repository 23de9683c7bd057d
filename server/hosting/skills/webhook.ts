/**
 * The `webhook` skill: an owner plugs any model or program in. Each job is POSTed as JSON to the owner's endpoint,
 * signed as event webhooks are (server/domain/events/webhooks.ts, the same helpers), so an owner verifies both alike:
 *
 *   POST <config.url>
 *   Content-Type: application/json
 *   X-Market-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(signingSecret, "<t>.<raw body>")>
 *   X-Market-Task: <taskHash>
 *   X-Market-Attempt: <attempt>
 *   { "taskHash": "0x...", "brief": "<brief text>", "requiredCapabilities": ["..."], "attempt": 1 }
 *
 * The endpoint answers 2xx with JSON: its `result` field is the result to deliver (the whole JSON when it has no
 * `result`). Any other answer fails the job with an error naming what came back: a non-2xx status (no redirect is
 * followed), a body that is not JSON, an empty or null result, no answer within `timeoutMs`; the agent stopping
 * (context.signal) abandons the request.
 *
 * The endpoint must be HTTPS on a public address. Loopback and private addresses, and then plain HTTP, are allowed
 * only when the host allows private addresses (SkillConfigOptions / SkillContext.allowPrivateAddresses: the devnet,
 * tests); the address is checked again on the one actually connected to, as for event webhooks.
 */
import http from "node:http";
import https from "node:https";
import { checkWebhookUrl, publicOnlyLookup, signatureHeader } from "../../domain/events/webhooks";
import { parseWebhookConfig } from "../../domain/agents/skills/specs";
import { isJsonObject } from "./jsonPaths";
import type { SkillContext, SkillJob } from "./types";

/** Largest answer body read (bytes): a result is at most 512 KiB of canonical JSON; room for the envelope. */
export const WEBHOOK_MAX_ANSWER_BYTES = 1024 * 1024;

/** The JSON body POSTed for `job`. */
export function webhookBody(job: SkillJob): string {
  return JSON.stringify({
    taskHash: job.taskHash,
    brief: job.briefText,
    requiredCapabilities: job.requiredCapabilities,
    attempt: job.attempt,
  });
}

/** The result in the endpoint's JSON answer: its `result` field, or the whole answer when it has none. */
function resultOf(status: number, text: string): unknown {
  if (text.trim() === "") throw new Error(`the webhook answered HTTP ${status} with an empty body, not a result`);
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new Error(`the webhook answered HTTP ${status} with a body that is not JSON`);
  }
  const result = isJsonObject(answer) && "result" in answer ? answer.result : answer;
  if (result === null || result === undefined) {
    throw new Error(`the webhook answered HTTP ${status} with a null result: there is nothing to deliver`);
  }
  return result;
}

/** POSTs `job` to the install's endpoint and answers the result it gives (see the module comment). */
export async function callWebhook(job: SkillJob, context: SkillContext): Promise<unknown> {
  const allowPrivate = context.allowPrivateAddresses ?? false;
  const config = parseWebhookConfig(context.config, { allowPrivateAddresses: allowPrivate });
  const secret = context.secrets.signingSecret;
  if (!secret) throw new Error("the webhook skill has no signingSecret: reinstall it with one");
  const { signal } = context;
  if (signal.aborted) throw new Error("the agent is stopping: the webhook was not called");

  return new Promise((resolve, reject) => {
    let settled = false;
    let request: http.ClientRequest | undefined;
    const finish = (error: Error | null, result?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      if (error) {
        request?.destroy();
        reject(error);
      } else {
        resolve(result);
      }
    };
    const onAbort = () => finish(new Error("the agent is stopping: the webhook call was abandoned"));
    // One bound for the whole call: resolving the host, connecting, and the answer.
    const timer = setTimeout(
      () => finish(new Error(`the webhook did not answer within ${config.timeoutMs} ms (config.timeoutMs)`)),
      config.timeoutMs,
    );
    signal.addEventListener("abort", onAbort, { once: true });

    const send = (url: URL) => {
      if (settled) return;
      const body = webhookBody(job);
      const timestamp = Math.floor(Date.now() / 1000);
      request = (url.protocol === "https:" ? https : http).request(
        url,
        {
          method: "POST",
          lookup: allowPrivate ? undefined : publicOnlyLookup,
          headers: {
            "content-type": "application/json",
            accept: "application/json",
            "content-length": Buffer.byteLength(body),
            "user-agent": "escrow-marketplace-hosted-agent/1",
            "x-market-signature": signatureHeader(secret, timestamp, body),
            "x-market-task": job.taskHash,
            "x-market-attempt": String(job.attempt),
          },
        },
        (response) => {
          const status = response.statusCode ?? 0;
          if (status < 200 || status >= 300) {
            response.resume();
            return finish(new Error(`the webhook answered HTTP ${status}, not a 2xx with a result`));
          }
          const chunks: Buffer[] = [];
          let size = 0;
          response.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > WEBHOOK_MAX_ANSWER_BYTES) {
              finish(new Error(`the webhook answered HTTP ${status} with more than ${WEBHOOK_MAX_ANSWER_BYTES} bytes`));
            } else {
              chunks.push(chunk);
            }
          });
          response.on("end", () => {
            try {
              finish(null, resultOf(status, Buffer.concat(chunks).toString("utf8")));
            } catch (error) {
              finish(error as Error);
            }
          });
          response.on("error", (error) => finish(new Error(`the webhook's answer broke off: ${error.message}`)));
        },
      );
      request.on("error", (error) => finish(new Error(`the webhook could not be reached: ${error.message}`)));
      request.end(body);
    };

    // Resolves the host first, as event webhooks do at registration: a name pointing at a private address is refused
    // with a clear message (and again, on the address connected to, by publicOnlyLookup).
    checkWebhookUrl(config.url, allowPrivate).then(send, (error: Error) => finish(error));
  });
}
