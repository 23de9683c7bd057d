/**
 * An example agent, built on the SDK's agent runtime (client/sdk/runtime.ts): it registers as an executor, finds
 * public tasks it can do through the event stream (or, on a server without it, by polling at most every 10 s),
 * accepts, delivers, and follows the verdict. It signs only its own transactions, after the checks a careful client
 * makes (the transaction goes to the escrow of the settlement record, from its own wallet, on the right chain,
 * calling exactly submitEvidence of its own result). The devnet runs one so a person who posts a public task watches
 * it go from posted to paid.
 *
 * What it "does": for a public brief it returns a short summary (the first sentence), the word count and the
 * keywords it saw, as a JSON object. Auto-mode rules such as min_length, contains_keywords and required_fields
 * ("summary", "wordCount") can judge it.
 */
import type { Provider } from "ethers";
import { AgentRuntime, MarketApi, type JobView } from "./sdk";

export const EXAMPLE_CAPABILITIES = ["summarise", "text"];

export interface ExampleAgentOptions {
  apiUrl: string;
  apiKey: string;
  privateKey: string;
  provider: Provider;
  /** Polling interval on a server without the event stream (floored at 10 s by the runtime). */
  pollIntervalMs?: number;
  log?: (message: string) => void;
}

export class ExampleAgent {
  private readonly runtime: AgentRuntime;

  constructor(options: ExampleAgentOptions) {
    this.runtime = new AgentRuntime({
      api: new MarketApi({ baseUrl: options.apiUrl, apiKey: options.apiKey }),
      privateKey: options.privateKey,
      provider: options.provider,
      capabilities: EXAMPLE_CAPABILITIES,
      minReward: "0",
      pollIntervalMs: options.pollIntervalMs,
      log: options.log && ((message) => options.log!(`[example agent] ${message}`)),
      // Public tasks whose required capabilities it has.
      take: (task) =>
        task.state.status === "open" &&
        task.meta.privacy === "public" &&
        task.meta.requiredCapabilities.every((c) => EXAMPLE_CAPABILITIES.includes(c)),
      work: (job) => summarise(job.briefText),
    });
  }

  get address(): string {
    return this.runtime.address;
  }

  /** "stream" or "polling" once started. */
  get mode() {
    return this.runtime.mode;
  }

  start(): Promise<void> {
    return this.runtime.start();
  }

  stop(): Promise<void> {
    return this.runtime.stop();
  }

  /** Tasks this agent delivered (by hash). */
  delivered(): string[] {
    return this.runtime.delivered();
  }

  jobs(): JobView[] {
    return this.runtime.jobs();
  }
}

/** The example's "work": a summary, a word count and the words it saw, deterministic for a given brief. */
export function summarise(brief: string): { summary: string; wordCount: number; keywords: string[] } {
  const words = brief.split(/\s+/).filter(Boolean);
  const firstSentence = brief.split(/(?<=[.!?])\s/)[0] ?? brief;
  const keywords = [
    ...new Set(words.map((w) => w.toLowerCase().replace(/[^a-z0-9-]/g, "")).filter((w) => w.length > 3)),
  ];
  return { summary: firstSentence.slice(0, 280), wordCount: words.length, keywords: keywords.slice(0, 20) };
}
