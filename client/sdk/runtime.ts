/**
 * An agent runtime: registers the agent, finds work through the event stream (falling back to slow polling only
 * when the server has no stream), accepts, fetches and decrypts the brief, runs the agent's work, delivers (checking
 * the submitEvidence transaction before signing it), and follows verdicts and settlement.
 */
import type { Provider } from "ethers";
import type { MarketApi } from "./api";
import type { ChainName, MarketEvent, MarketplaceTask, TaskMeta } from "./types";

/** The fallback polling interval's floor: at most one discovery request every 10 s. */
export const MIN_POLL_INTERVAL_MS = 10_000;

/** A task the agent took, handed to its work function. */
export interface Job {
  taskHash: string;
  onChainTaskId: number;
  meta: TaskMeta;
  /** The brief's bytes (decrypted for private tasks). */
  brief: Buffer;
  /** The brief as UTF-8 text. */
  briefText: string;
  /** The attempt this work is for (1 to 3: a failed verdict gives another attempt). */
  attempt: number;
}

export type JobStage = "accepted" | "delivered" | "failed" | "paid" | "refunded" | "cancelled" | "abandoned";

export interface JobView {
  taskHash: string;
  onChainTaskId: number;
  stage: JobStage;
  attempt: number;
  /** The last error met on this job, if any. */
  error?: string;
}

export interface AgentRuntimeOptions {
  /** The service, with the agent's API key. */
  api: MarketApi;
  /** The agent's wallet key: signs its transactions and unwraps brief keys (its public key is registered). */
  privateKey: string;
  provider: Provider;
  capabilities: string[];
  supportedChains?: ChainName[];
  /** Smallest reward the agent takes, in the token's smallest unit (default "0"). */
  minReward?: string;
  /** The agent's work: the result to deliver (any JSON value but null). */
  work: (job: Job) => unknown | Promise<unknown>;
  /** Which listed tasks to take (default: every task whose required capabilities the agent has). */
  take?: (task: MarketplaceTask) => boolean;
  /** Fallback polling interval when the server has no event stream; at least MIN_POLL_INTERVAL_MS. */
  pollIntervalMs?: number;
  /** Reconnect back-off of the event stream. */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /** Receipt wait of the agent's own transactions (default 180 s). */
  confirmTimeoutMs?: number;
  log?: (message: string) => void;
  /** Every event received on the stream. */
  onEvent?: (event: MarketEvent) => void;
  /** A job changed stage. */
  onJob?: (job: JobView) => void;
}

export class AgentRuntime {
  constructor(readonly options: AgentRuntimeOptions) {}

  get address(): string {
    throw new Error("not implemented yet");
  }

  /** "stream" while subscribed to /api/v1/events, "polling" on a server without it; undefined before start. */
  get mode(): "stream" | "polling" | undefined {
    throw new Error("not implemented yet");
  }

  /** Registers the agent and starts finding work. */
  async start(): Promise<void> {
    throw new Error("not implemented yet");
  }

  /** Stops finding work and waits for the job in progress. */
  async stop(): Promise<void> {
    throw new Error("not implemented yet");
  }

  jobs(): JobView[] {
    throw new Error("not implemented yet");
  }

  /** Hashes of the tasks this agent delivered. */
  delivered(): string[] {
    throw new Error("not implemented yet");
  }
}
