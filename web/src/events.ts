/**
 * Live updates: the signed-in wallet's marketplace events, through the SDK's `subscribe` (client/sdk/events.ts:
 * `GET /api/v1/events` read with fetch and a streaming body, since EventSource cannot send the X-API-Key header; a
 * dropped stream resumes with Last-Event-ID after a back-off of 1 s doubling to 30 s, none lost, none twice). Pages
 * keep polling as the fallback, more slowly while the stream is up.
 */
import { useEffect, useRef, useState } from "react";
import { subscribe } from "../../client/sdk/index";
import { marketApi } from "./api";
import { useSession } from "./session";
import type { MarketEvent } from "./types";

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
    const subscription = subscribe(marketApi({ apiKey }), (event) => handler.current(event.data), {
      onOpen: () => setLive(true),
      // A connection failed (retryInMs > 0: polling goes on until it is back); 0 is one malformed event, skipped.
      onError: (_error, retryInMs) => {
        if (retryInMs > 0) setLive(false);
      },
    });
    // Refused for good (401, 403, or a service without the stream): polling only.
    subscription.done.catch(() => setLive(false));
    return () => {
      void subscription.close();
      setLive(false);
    };
  }, [apiKey]);

  return Boolean(apiKey) && live;
}
