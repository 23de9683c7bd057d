/**
 * Webhooks (docs/api.md, "Webhooks"): a wallet registers endpoints; each event of the wallet (the same `data` the
 * SSE stream sends) is POSTed to each matching endpoint, signed with the webhook's secret:
 *
 *   X-Market-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 *
 * Deliveries are rows (webhook_deliveries): fanned out from the event log behind a persisted cursor, tried at once,
 * retried with exponential back-off up to a bounded number of attempts, and their outcomes readable; a restart picks
 * up pending ones. Endpoints must be public addresses (checked at registration and again, on the resolved address,
 * at each connection) unless WEBHOOK_ALLOW_PRIVATE (the devnet, tests).
 */
import crypto from "node:crypto";
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { Deps } from "../deps";
import { fail } from "../../errors";
import { findExecutor } from "../../db/repositories/executors";
import { getMarketEvents, latestEventId, listEventsAfter } from "../../db/repositories/marketEvents";
import {
  allWebhooks,
  claimDelivery,
  countWebhooksOf,
  deleteWebhook,
  dueWebhookIds,
  findWebhook,
  getFanOutCursor,
  insertDeliveries,
  insertWebhook,
  listDeliveries,
  listWebhooksOf,
  nextDueDelivery,
  recordAttempt,
  setFanOutCursor,
  type DeliveryRecord,
  type DeliveryStatus,
  type WebhookRecord,
} from "../../db/repositories/webhooks";
import { eventData, recipientRole } from "./log";
import { chainIdOf } from "../projection";
import type { EventHub } from "./hub";
import type { EventType, WebhookBody } from "../schemas/events";

// ---------------------------------------------------------------------------------------------------------------
// Signing
// ---------------------------------------------------------------------------------------------------------------

/** The hex HMAC-SHA256 of `"<timestamp>.<body>"` under `secret`: the `v1` of X-Market-Signature. */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return crypto.createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${webhookSignature(secret, timestamp, body)}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Destinations
// ---------------------------------------------------------------------------------------------------------------

/**
 * IPv4 ranges a webhook never reaches unless private delivery is allowed (the IANA IPv4 special-purpose registry:
 * nothing here is a public unicast address).
 */
const NON_PUBLIC_V4 = new net.BlockList();
for (const [prefix, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  NON_PUBLIC_V4.addSubnet(prefix, bits, "ipv4");
}

/**
 * IPv6: only global unicast (2000::/3) can be public, less the IANA IPv6 special-purpose registry's ranges that are
 * not globally reachable or that carry an IPv4 address (6to4, NAT64, Teredo in 2001::/23), which would otherwise
 * reach any IPv4 address, private ones included. Outside 2000::/3 (::/128, ::1, the IPv4-compatible ::/96, 100::/64,
 * 64:ff9b::/96, 64:ff9b:1::/48, the IPv4-mapped ::ffff:0:0/96, fc00::/7, fe80::/10, ff00::/8, ...) nothing is
 * public. Addresses are compared as 128-bit numbers, so every spelling of one address (compressed or not, hex or
 * dotted IPv4 tail, with a zone) gets the same answer.
 */
const NON_PUBLIC_GLOBAL_V6: readonly [string, number][] = [
  ["2001::", 23], // IETF protocol assignments: Teredo (2001::/32), benchmarking, ORCHID, AMT, ...
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4: carries an IPv4 address
  ["3fff::", 20], // documentation
];

/** The 128 bits of an IPv6 address in any spelling (compressed, dotted IPv4 tail, zone), or undefined. */
function ipv6Bits(text: string): bigint | undefined {
  const bare = text.replace(/%.*$/, "");
  if (net.isIPv6(bare) === false) return undefined;
  let head = bare;
  const words: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(head);
  let tail: number[] = [];
  if (dotted) {
    const octets = dotted[1].split(".").map(Number);
    tail = [(octets[0] << 8) | octets[1], (octets[2] << 8) | octets[3]];
    head = head.slice(0, -dotted[1].length);
    if (head.endsWith(":") && !head.endsWith("::")) head = head.slice(0, -1);
  }
  const [left, right] = head.includes("::") ? head.split("::") : [head, undefined];
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((h) => parseInt(h, 16)));
  const leftWords = parse(left);
  const rightWords = [...(right === undefined ? [] : parse(right)), ...tail];
  if (right === undefined) words.push(...leftWords, ...tail);
  else words.push(...leftWords, ...new Array(8 - leftWords.length - rightWords.length).fill(0), ...rightWords);
  if (words.length !== 8) return undefined;
  return words.reduce((acc, w) => (acc << 16n) | BigInt(w), 0n);
}

const inPrefix = (bits: bigint, prefix: string, length: number) =>
  bits >> BigInt(128 - length) === ipv6Bits(prefix)! >> BigInt(128 - length);

/** Whether `ip` (IPv4, or IPv6 in any spelling, bracketed or not) is a public unicast address. */
export function isPublicAddress(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, "");
  if (net.isIPv4(bare)) return !NON_PUBLIC_V4.check(bare, "ipv4");
  const bits = ipv6Bits(bare);
  if (bits === undefined) return false;
  if (!inPrefix(bits, "2000::", 3)) return false;
  return !NON_PUBLIC_GLOBAL_V6.some(([prefix, length]) => inPrefix(bits, prefix, length));
}

const notPublic = (url: URL, address: string): never =>
  fail(
    "WEBHOOK_URL_NOT_PUBLIC",
    `url: ${url.hostname} is ${address === url.hostname.replace(/^\[|\]$/g, "") ? "" : `resolved to ${address}, `}not a public address (loopback, private, link-local and reserved ranges are refused)`,
  );

/** Checks a webhook URL: http(s), no credentials, and (unless allowed) a host whose every address is public. */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  const url = new URL(raw);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    fail("VALIDATION_ERROR", `url: must be http or https, not ${url.protocol.replace(":", "")}`);
  }
  if (url.username || url.password) fail("VALIDATION_ERROR", "url: must not carry a user name or password");
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (net.isIP(host)) {
    if (!isPublicAddress(host)) notPublic(url, host);
    return url;
  }
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true });
  } catch {
    return fail("VALIDATION_ERROR", `url: host ${host} does not resolve`);
  }
  for (const a of addresses) if (!isPublicAddress(a.address)) notPublic(url, a.address);
  return url;
}

/** A dns.lookup that refuses non-public answers: the check made on the address actually connected to. */
export const publicOnlyLookup: net.LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, "", 4);
    const list = addresses as unknown as dns.LookupAddress[];
    const bad = list.find((a) => !isPublicAddress(a.address));
    if (bad) return callback(new Error(`${hostname} resolved to ${bad.address}, not a public address`), "", 4);
    if ((options as { all?: boolean }).all)
      return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
    callback(null, list[0].address, list[0].family);
  });
};

// ---------------------------------------------------------------------------------------------------------------
// Routes' operations
// ---------------------------------------------------------------------------------------------------------------

const toView = (w: WebhookRecord) => ({
  id: w.id,
  url: w.url,
  events: w.events as EventType[] | null,
  createdAt: w.createdAt,
});

/** POST /webhooks: registers `body.url` for the key's wallet; the answer holds the signing secret, once. */
export async function registerWebhook(deps: Deps, caller: { wallet: string; keyId: number | null }, body: WebhookBody) {
  const { webhooks } = deps.config.push;
  if ((await countWebhooksOf(deps.db, caller.wallet)) >= webhooks.maxPerWallet) {
    fail("WEBHOOK_LIMIT", `a wallet has at most ${webhooks.maxPerWallet} webhooks; delete one first`);
  }
  const url = await checkWebhookUrl(body.url, webhooks.allowPrivate);
  const record = await insertWebhook(deps.db, {
    wallet: caller.wallet.toLowerCase(),
    keyId: caller.keyId,
    url: url.toString(),
    events: body.events ? [...new Set(body.events)] : null,
    secret: `whsec_${crypto.randomBytes(32).toString("hex")}`,
    // Events already in the log predate the webhook: it receives the ones written after it.
    afterEventId: await latestEventId(deps.db),
    createdAt: deps.clock.wallNow(),
  });
  return { ...toView(record), secret: record.secret };
}

export async function listWebhooks(deps: Deps, wallet: string) {
  return { webhooks: (await listWebhooksOf(deps.db, wallet)).map(toView) };
}

export async function removeWebhook(deps: Deps, wallet: string, id: number) {
  if (!(await deleteWebhook(deps.db, id, wallet))) fail("NOT_FOUND", `webhook ${id} not found for this wallet`);
  return { deleted: true as const };
}

/** GET /webhooks/:id/deliveries: the webhook's deliveries, newest first, with their outcome. */
export async function webhookDeliveries(
  deps: Deps,
  wallet: string,
  id: number,
  query: { limit: number; status?: DeliveryStatus },
) {
  const hook = await findWebhook(deps.db, id);
  if (!hook || hook.wallet !== wallet.toLowerCase())
    return fail("NOT_FOUND", `webhook ${id} not found for this wallet`);
  const deliveries = await listDeliveries(deps.db, id, query);
  const events = await getMarketEvents(
    deps.db,
    deliveries.map((d) => d.eventId),
  );
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    deliveries: deliveries.map((d) => ({
      id: d.id,
      eventId: String(d.eventId),
      eventType: events.get(d.eventId)?.type ?? null,
      status: d.status,
      attempts: d.attempts,
      nextAttemptAt: d.status === "pending" ? iso(d.nextAttemptAtMs) : null,
      lastStatusCode: d.lastStatusCode,
      lastError: d.lastError,
      createdAt: iso(d.createdAtMs)!,
      updatedAt: iso(d.updatedAtMs)!,
    })),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Delivery
// ---------------------------------------------------------------------------------------------------------------

const FAN_OUT_PAGE = 500;
/** Webhooks one process sends to at the same time (each webhook's deliveries go one at a time). */
const PARALLEL_WEBHOOKS = 64;
/** How long a claim outlives its attempt's deadline: room for recording the outcome. */
const LEASE_MARGIN_MS = 30_000;

/** The wait before attempt `attempts + 1`, after `attempts` failed ones: base, 2 x base, 4 x base, ... capped. */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
}

/**
 * Fans events out to webhooks and sends due deliveries; runs on each new event and on a timer for retries.
 *
 * A pass only fans out and starts senders: each webhook with due deliveries gets its own sender, which sends them
 * one at a time in event order while the passes (and other webhooks' senders) go on. An attempt has a hard deadline
 * of WEBHOOK_TIMEOUT_MS from its claim, so a slow endpoint costs only its own deliveries that long, and the claim
 * (the lease other processes respect) outlives the deadline.
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;
  /** The senders running in this process, by webhook id. */
  private readonly senders = new Map<number, Promise<void>>();

  constructor(
    private readonly deps: Deps,
    private readonly hub: EventHub,
  ) {}

  start(): void {
    this.unsubscribe = this.hub.onEvents(() => this.kick());
    const { retryBaseMs } = this.deps.config.push.webhooks;
    this.timer = setInterval(() => this.kick(), Math.max(20, Math.min(1000, Math.floor(retryBaseMs / 2))));
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    await this.running;
    await Promise.all(this.senders.values());
  }

  /** Runs a pass now, or right after the running one. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass().finally(() => (this.running = undefined));
  }

  /** Resolves once no pass and no sender runs: whatever the last kick led to has happened. */
  async idle(): Promise<void> {
    while (this.running || this.senders.size > 0) {
      await this.running;
      await Promise.all(this.senders.values());
    }
  }

  private async pass(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.fanOut();
        await this.startSenders();
      } catch (error) {
        this.deps.logger.warn("webhook pass failed; retrying on the next tick", { error });
      }
    } while (this.again && !this.stopped);
  }

  /** Writes a pending delivery per (webhook, event) for events past the cursor. */
  private async fanOut(): Promise<void> {
    const { db } = this.deps;
    let cursor = (await getFanOutCursor(db)) ?? 0;
    let hooks: WebhookRecord[] | undefined;
    const executors = new Map<string, boolean>();
    for (;;) {
      const rows = await listEventsAfter(db, cursor, FAN_OUT_PAGE);
      if (rows.length === 0) return;
      hooks ??= await allWebhooks(db);
      const pairs: { webhookId: number; eventId: number }[] = [];
      for (const hook of hooks) {
        if (!executors.has(hook.wallet)) executors.set(hook.wallet, Boolean(await findExecutor(db, hook.wallet)));
        for (const row of rows) {
          if (row.id <= hook.afterEventId) continue;
          if (hook.events && !hook.events.includes(row.type)) continue;
          if (!recipientRole(row, { wallet: hook.wallet, executor: executors.get(hook.wallet)! })) continue;
          pairs.push({ webhookId: hook.id, eventId: row.id });
        }
      }
      await insertDeliveries(db, pairs, this.deps.clock.wallNowMs());
      cursor = rows[rows.length - 1].id;
      await setFanOutCursor(db, cursor);
      if (rows.length < FAN_OUT_PAGE) return;
    }
  }

  /** Starts a sender for each webhook with due deliveries that has none running here; does not wait for them. */
  private async startSenders(): Promise<void> {
    const room = PARALLEL_WEBHOOKS - this.senders.size;
    if (room <= 0 || this.stopped) return;
    const ids = await dueWebhookIds(this.deps.db, this.deps.clock.wallNowMs(), [...this.senders.keys()], room);
    for (const id of ids) {
      if (this.senders.has(id)) continue;
      const sender = this.send(id)
        .catch((error) => this.deps.logger.warn("webhook sender failed; retrying on the next tick", { error }))
        .finally(() => {
          this.senders.delete(id);
          this.kick(); // a webhook left waiting for room may be due
        });
      this.senders.set(id, sender);
    }
  }

  /** Sends one webhook's due deliveries, one at a time in event order, until none is due. */
  private async send(webhookId: number): Promise<void> {
    const { db, clock } = this.deps;
    const { timeoutMs } = this.deps.config.push.webhooks;
    while (!this.stopped) {
      const delivery = await nextDueDelivery(db, webhookId, clock.wallNowMs());
      if (!delivery) return;
      const claimedAtMs = clock.wallNowMs();
      const deadlineMs = claimedAtMs + timeoutMs;
      // Another process took it first: its lease moved the row out of the due ones.
      if (!(await claimDelivery(db, delivery, deadlineMs + LEASE_MARGIN_MS))) continue;
      await this.attempt(delivery, deadlineMs);
    }
  }

  /** One attempt of `delivery`; records its outcome and, on failure, the next try or the final failure. */
  private async attempt(delivery: DeliveryRecord, deadlineMs: number): Promise<void> {
    const { db, clock } = this.deps;
    const config = this.deps.config.push.webhooks;
    const hook = await findWebhook(db, delivery.webhookId);
    if (!hook) return; // deleted meanwhile: its deliveries go with it
    const event = (await getMarketEvents(db, [delivery.eventId])).get(delivery.eventId);
    const role = event && recipientRole(event, { wallet: hook.wallet, executor: true });
    const attempts = delivery.attempts + 1;
    if (!event || !role) {
      await recordAttempt(db, delivery.id, {
        status: "failed",
        attempts: delivery.attempts,
        nextAttemptAtMs: null,
        lastStatusCode: null,
        lastError: "the event left the event log (retention) before it could be delivered",
        nowMs: clock.wallNowMs(),
      });
      return;
    }
    const body = JSON.stringify(eventData(event, role, (chain) => chainIdOf(this.deps, chain)));
    const outcome = await post(hook, delivery, body, clock.wallNow(), {
      allowPrivate: config.allowPrivate,
      timeoutMs: config.timeoutMs,
      budgetMs: Math.max(0, deadlineMs - clock.wallNowMs()),
    });
    const nowMs = clock.wallNowMs();
    if (outcome.ok) {
      await recordAttempt(db, delivery.id, {
        status: "delivered",
        attempts,
        nextAttemptAtMs: null,
        lastStatusCode: outcome.status,
        lastError: null,
        nowMs,
      });
      return;
    }
    const last = attempts >= config.maxAttempts;
    await recordAttempt(db, delivery.id, {
      status: last ? "failed" : "pending",
      attempts,
      nextAttemptAtMs: last ? null : nowMs + retryDelayMs(attempts, config.retryBaseMs, config.retryMaxMs),
      lastStatusCode: outcome.status,
      lastError: outcome.error,
      nowMs,
    });
  }
}

interface PostOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
}

/**
 * POSTs one signed delivery; any 2xx is a success, anything else (3xx included: no redirect is followed) a failure.
 * The request is destroyed when `budgetMs` runs out, however the endpoint trickles its answer; the answer's body is
 * never read (the connection closes once the status is known).
 */
function post(
  hook: WebhookRecord,
  delivery: DeliveryRecord,
  body: string,
  timestamp: number,
  config: { allowPrivate: boolean; timeoutMs: number; budgetMs: number },
): Promise<PostOutcome> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(hook.url);
    } catch {
      return resolve({ ok: false, status: null, error: "the webhook URL does not parse" });
    }
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (!config.allowPrivate && net.isIP(host) && !isPublicAddress(host)) {
      return resolve({ ok: false, status: null, error: `${host} is not a public address` });
    }
    const event = JSON.parse(body) as { id: string; type: string };
    const request = (url.protocol === "https:" ? https : http).request(
      url,
      {
        method: "POST",
        timeout: config.timeoutMs,
        lookup: config.allowPrivate ? undefined : publicOnlyLookup,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "user-agent": "escrow-marketplace-webhooks/1",
          "x-market-signature": signatureHeader(hook.secret, timestamp, body),
          "x-market-event-id": event.id,
          "x-market-event": event.type,
          "x-market-delivery": String(delivery.id),
        },
      },
      (response) => {
        clearTimeout(deadline);
        const status = response.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        resolve({ ok, status, error: ok ? null : `the endpoint answered HTTP ${status}` });
        request.destroy();
      },
    );
    const deadline = setTimeout(
      () => request.destroy(new Error(`no answer within ${config.timeoutMs} ms`)),
      config.budgetMs,
    );
    request.on("timeout", () => request.destroy(new Error(`no answer within ${config.timeoutMs} ms`)));
    request.on("error", (error) => {
      clearTimeout(deadline);
      resolve({ ok: false, status: null, error: error.message });
    });
    request.end(body);
  });
}
