/**
 * An example agent: it registers as an executor, takes the public tasks it can do, and delivers. It signs only its
 * own transactions, after the checks a careful client makes (the transaction goes to the escrow of the settlement
 * record, from its own wallet, calling exactly the expected function). The devnet runs one so a person who posts a
 * public task watches it go from posted to paid; `npm run agent` runs one against any API.
 *
 * What it "does": for a public brief it returns a short summary (the first sentence), the word count and the
 * keywords it saw, as a JSON object. Auto-mode rules such as min_length, contains_keywords and required_fields
 * ("summary", "wordCount") can judge it.
 */
import { Interface, Wallet, type Provider } from "ethers";
import { agentPublicKey } from "../server/domain/briefs";

const ESCROW = new Interface(["function submitEvidence(uint256 taskId, bytes32 evidenceHash)"]);

export const EXAMPLE_CAPABILITIES = ["summarise", "text"];

export interface ExampleAgentOptions {
  apiUrl: string;
  apiKey: string;
  privateKey: string;
  provider: Provider;
  pollIntervalMs?: number;
  log?: (message: string) => void;
}

interface ApiAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

type Job = { hash: string; brief: string; stage: "accepted" | "delivered" };

export class ExampleAgent {
  private readonly wallet: Wallet;
  private readonly jobs = new Map<string, Job>();
  private readonly refused = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private busy: Promise<void> = Promise.resolve();
  private escrow = "";

  constructor(private readonly options: ExampleAgentOptions) {
    this.wallet = new Wallet(options.privateKey, options.provider);
  }

  get address(): string {
    return this.wallet.address;
  }

  /** Tasks this agent delivered (by hash). */
  delivered(): string[] {
    return [...this.jobs.values()].filter((j) => j.stage === "delivered").map((j) => j.hash);
  }

  private log(message: string) {
    this.options.log?.(`[example agent ${this.wallet.address.slice(0, 8)}] ${message}`);
  }

  private async call(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    const response = await fetch(`${this.options.apiUrl}${path}`, {
      method,
      headers: {
        "x-api-key": this.options.apiKey,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json().catch(() => undefined) };
  }

  async start(): Promise<void> {
    const settlement = await this.call("GET", "/api/v1/health/settlement");
    const chain = settlement.body.data.chains.find(
      (c: { chain: string }) => c.chain === settlement.body.data.postingChain,
    );
    this.escrow = String(chain.escrowAddress).toLowerCase();
    const registered = await this.call("POST", "/api/v1/a2a/executors", {
      publicKey: agentPublicKey(this.options.privateKey),
      capabilities: EXAMPLE_CAPABILITIES,
      supportedChains: [settlement.body.data.postingChain],
      minReward: "0",
    });
    if (registered.status !== 200) throw new Error(`registration refused: ${JSON.stringify(registered.body)}`);
    this.log(`registered with capabilities ${EXAMPLE_CAPABILITIES.join(", ")}`);
    this.running = true;
    const tick = () => {
      if (!this.running) return;
      this.busy = this.poll()
        .catch((error) => this.log(`poll failed: ${(error as Error).message}`))
        .finally(() => {
          if (this.running) this.timer = setTimeout(tick, this.options.pollIntervalMs ?? 1000);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.busy;
  }

  /** One round: take new public tasks it can do, deliver accepted ones. */
  async poll(): Promise<void> {
    const open = await this.call("GET", `/api/v1/a2a/tasks?capabilities=${EXAMPLE_CAPABILITIES.join(",")}&limit=20`);
    for (const task of open.body?.data?.tasks ?? []) {
      const hash: string = task.meta.taskHash;
      if (task.meta.privacy !== "public" || this.jobs.has(hash) || this.refused.has(hash)) continue;
      const accepted = await this.call("POST", `/api/v1/a2a/tasks/${hash}/accept`, {});
      if (accepted.status === 200) {
        this.jobs.set(hash, { hash, brief: task.meta.publicBrief ?? "", stage: "accepted" });
        this.log(`accepted ${hash}`);
      } else if (accepted.status < 500 && accepted.body?.error?.code !== "ACCEPT_LOCKED") {
        this.refused.add(hash); // taken by someone else, reserved, not for us: do not ask again
      }
    }
    for (const job of this.jobs.values()) {
      if (job.stage === "accepted") await this.deliver(job);
    }
  }

  private async deliver(job: Job): Promise<void> {
    const result = summarise(job.brief);
    const submitted = await this.call("POST", `/api/v1/a2a/tasks/${job.hash}/submit`, { result });
    if (submitted.status === 503) return; // ASSIGNMENT_PENDING: the assignment is not confirmed yet
    if (submitted.status !== 200) {
      this.log(`submit of ${job.hash} refused: ${submitted.body?.error?.code}`);
      job.stage = "delivered";
      return;
    }
    const tx = submitted.body.data.unsignedTx;
    // The checks a careful client makes before signing.
    if (String(tx.to).toLowerCase() !== this.escrow) throw new Error(`refusing to sign: ${tx.to} is not the escrow`);
    if (String(tx.from).toLowerCase() !== this.wallet.address.toLowerCase())
      throw new Error("refusing to sign: not my wallet");
    const call = ESCROW.parseTransaction({ data: tx.data });
    if (call?.name !== "submitEvidence" || call.args[1] !== submitted.body.data.evidenceHash) {
      throw new Error("refusing to sign: not the submitEvidence of my result");
    }
    const sent = await this.wallet.sendTransaction({ to: tx.to, data: tx.data });
    await sent.wait();
    job.stage = "delivered";
    this.log(`delivered ${job.hash} (attempt ${submitted.body.data.attempt}, tx ${sent.hash})`);
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
