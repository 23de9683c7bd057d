/**
 * Live updates: the signed-in wallet's marketplace events from `GET /api/v1/events` (Server-Sent Events). EventSource
 * cannot send the X-API-Key header, so the stream is read with fetch and a streaming body. A dropped stream reconnects
 * after RECONNECT_MS with Last-Event-ID (none lost, none twice); pages keep polling as the fallback, more slowly while
 * the stream is up. The SSE text is parsed by the SDK's parser (client/sdk/events.ts), the one home of that rule.
 */
import { useEffect, useRef, useState } from "react";
import { useSession } from "./session";
import type { MarketEvent } from "./types";
import { SseParser } from "../../client/sdk/events";

export const RECONNECT_MS = 5000;

/**
 * Calls `onEvent` for each event of the signed-in wallet while the component is mounted; answers whether the stream
 * is up. Signed out, nothing is opened (the stream needs an API key) and the answer is false.
 */
export function useMarketEvents(onEvent: (event: MarketEvent) => void): boolean {
  const { session } = useSession();
  const apiKey = session?.apiKey;
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const [live, setLive] = useState(false);

  useEffect(() => {
    if (!apiKey) return;
    const abort = new AbortController();
    let lastId: string | undefined;
    const wait = (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        abort.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        });
      });
    void (async () => {
      while (!abort.signal.aborted) {
        try {
          const headers: Record<string, string> = { accept: "text/event-stream", "x-api-key": apiKey };
          if (lastId) headers["last-event-id"] = lastId;
          const response = await fetch("/api/v1/events", { headers, signal: abort.signal, cache: "no-store" });
          if (!response.ok || !response.body) throw new Error(`the event stream answered ${response.status}`);
          setLive(true);
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          const parser = new SseParser();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            for (const event of parser.feed(value)) {
              if (event.id) lastId = event.id;
              try {
                handler.current(JSON.parse(event.data) as MarketEvent);
              } catch {
                // A malformed event is skipped; polling still catches up.
              }
            }
          }
        } catch {
          // Refused, dropped or aborted: polling goes on; retried below unless unmounted.
        }
        setLive(false);
        await wait(RECONNECT_MS);
      }
    })();
    return () => abort.abort();
  }, [apiKey]);

  return Boolean(apiKey) && live;
}
