/**
 * New chain heads pushed by the node (`eth_subscribe` "newHeads"), so that the indexer wakes when a block arrives
 * instead of waiting out a poll. A HeadSource is optional on a ChainReader: a node reached over HTTP pushes nothing, and
 * the indexer polls the head there instead.
 */
import { WebSocketProvider, type SocketSubscriber, type WebSocketLike } from "ethers";

/** Called with each new head's block number, in the order the node announces them. */
export type HeadListener = (blockNumber: number) => void;

/** Ends a subscription (closes what it opened); safe to call twice. */
export type Unsubscribe = () => Promise<void>;

export interface SubscribeHeadsOptions {
  onHead: HeadListener;
  /** Called once when an established subscription ends by itself (the socket closed); never after unsubscribing. */
  onLost: (error: Error) => void;
  /** Aborting gives up a subscription still being set up: the promise rejects and nothing stays open. */
  signal?: AbortSignal;
}

export interface HeadSource {
  /** Subscribes to new heads. Resolves once the node confirmed the subscription; rejects when it refused it. */
  subscribe(options: SubscribeHeadsOptions): Promise<Unsubscribe>;
}

/** An EIP-1193 provider that emits its subscriptions as `message` events (the in-process Hardhat network does). */
export interface PushingProvider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
  on(event: "message", listener: (message: unknown) => void): unknown;
  removeListener(event: "message", listener: (message: unknown) => void): unknown;
}

interface SubscriptionMessage {
  type: "eth_subscription";
  data: { subscription: string; result: { number: string } };
}

const isSubscriptionMessage = (m: unknown): m is SubscriptionMessage =>
  typeof m === "object" && m !== null && (m as { type?: unknown }).type === "eth_subscription";

/**
 * New heads of an EIP-1193 provider in this process, such as Hardhat's `network.provider` (benchmarks and tests use it
 * beside the HardhatEthersProvider their ChainReader reads through, whose own "block" event is a 50 ms poll).
 *
 * @example
 * const chain = providerChainReader(ethers.provider, eip1193Heads(network.provider));
 */
export function eip1193Heads(provider: PushingProvider): HeadSource {
  return {
    async subscribe({ onHead, signal }) {
      if (signal?.aborted) throw new Error("new-head subscription aborted");
      let id: string | undefined;
      // Listening before subscribing: a head announced before the id is known is dropped (the caller reads the head
      // itself after subscribing), never mistaken for another subscription's.
      const onMessage = (message: unknown) => {
        if (isSubscriptionMessage(message) && id !== undefined && message.data.subscription === id) {
          onHead(Number(message.data.result.number));
        }
      };
      provider.on("message", onMessage);
      try {
        id = (await provider.request({ method: "eth_subscribe", params: ["newHeads"] })) as string;
      } catch (error) {
        provider.removeListener("message", onMessage);
        throw error;
      }
      let ended = false;
      return async () => {
        if (ended) return;
        ended = true;
        provider.removeListener("message", onMessage);
        await provider.request({ method: "eth_unsubscribe", params: [id] }).catch(() => undefined);
      };
    },
  };
}

/** ethers' socket, with the close handler the `ws` socket under it has and its WebSocketLike type leaves out. */
type ClosingSocket = WebSocketLike & { onclose?: ((event: { code?: number; reason?: unknown }) => void) | null };

/**
 * New heads over a WebSocket endpoint of the node (`wss://...`): one socket per subscription, used for nothing else
 * (every other read stays on the HTTP endpoint and its retries). Connection failures reject the subscription rather
 * than reaching the process as an unhandled error; a socket that closes later is reported through `onLost`.
 *
 * @example
 * const chain = providerChainReader(new JsonRpcProvider(rpcUrl), webSocketHeads("wss://node.example/ws"));
 */
export function webSocketHeads(url: string): HeadSource {
  return {
    async subscribe({ onHead, onLost, signal }) {
      if (signal?.aborted) throw new Error("new-head subscription aborted");
      const provider = new WebSocketProvider(url, undefined, { staticNetwork: true });
      const socket = provider.websocket as ClosingSocket;
      let established = false;
      let ended = false;
      const end: Unsubscribe = async () => {
        if (ended) return;
        ended = true;
        signal?.removeEventListener("abort", onAbort);
        // Closing an unopened socket makes `ws` emit an error: the handlers above stay to receive it.
        await provider.destroy();
      };
      let fail: (error: Error) => void = () => undefined;
      const failed = new Promise<never>((_, reject) => (fail = reject));
      failed.catch(() => undefined);
      const closed = (error: Error) => {
        if (ended) return;
        if (established) {
          void end();
          onLost(error);
        } else fail(error);
      };
      socket.onerror = (event: { message?: string; error?: unknown }) =>
        closed(new Error(`new-head socket ${redact(url)}: ${event?.message ?? String(event?.error ?? "error")}`));
      socket.onclose = (event) =>
        closed(new Error(`new-head socket ${redact(url)} closed (code ${event?.code ?? "unknown"})`));
      const onAbort = () => fail(new Error("new-head subscription aborted"));
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        const id = (await Promise.race([provider.send("eth_subscribe", ["newHeads"]), failed])) as string;
        // Subscription messages with this id reach this object (ethers' SocketProvider routes them by id); ethers'
        // own "block" subscriber is not used because its eth_subscribe failure would be an unhandled rejection.
        // A message already on its way when the socket is being closed is dropped.
        const subscriber = {
          _handleMessage: (head: { number: string }) => void (ended || onHead(Number(head.number))),
        } as unknown as SocketSubscriber;
        provider._register(id, subscriber);
        established = true;
        return end;
      } catch (error) {
        await end();
        throw error;
      }
    },
  };
}

/** The URL without what may be a provider key (its path and query). */
function redact(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid URL)";
  }
}
