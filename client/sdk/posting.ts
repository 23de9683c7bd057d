/**
 * The posting flow in one call (spec "What the service does", posting flow; docs/api.md): check the key's wallet and
 * the settlement record, encrypt and wrap private briefs, upload, build, check the built transaction, approve exactly
 * the reward, send, confirm, index, and answer the listed tasks. Resumable through a PostingJournal.
 */
import { getAddress, isAddress, sha256, type Provider, type Signer } from "ethers";
import type { MarketApi } from "./api";
import {
  checkAmounts,
  checkApproveTx,
  checkBalance,
  checkEscrowTx,
  checkQuote,
  checkOwner,
  checkRpc,
  encodeApprove,
  pinSettlement,
  pinnedChain,
  readAllowance,
  type ExpectedTask,
  type SettlementPin,
} from "./checks";
import { ApiError, ClientError, MarketError, refuse, type RowError } from "./errors";
import {
  MemoryJournal,
  type JournalItem,
  type JournalTx,
  type PostingJournal,
  type PostingRecord,
  type PostingStage,
} from "./journal";
import { pendingNonce, TxSender } from "./sender";
import { sealBrief, type BriefRecipient } from "./briefCrypto";
import type {
  ChainName,
  IndexItem,
  IndexResult,
  TaskBuildTerms,
  TaskDetail,
  UnsignedTx,
  VerificationCriteria,
} from "./types";

export const DEFAULT_DURATION_SECONDS = 86_400;
export const DEFAULT_LOCATION_ZONE = "global";

/** One task to post. */
export interface TaskDraft {
  /** The brief: text (UTF-8) or bytes. Private briefs are encrypted before upload; public ones are uploaded as-is. */
  brief: string | Uint8Array;
  /** Default private. */
  privacy?: "private" | "public";
  /** Reward in the token's smallest unit (USDC: 6 decimals). */
  amount: bigint | string | number;
  /** Seconds, 3600 to 7776000 (default 86400). */
  duration?: number | string;
  /** Default "global". */
  locationZone?: string;
  verificationMode?: "manual" | "auto" | "agent";
  verificationCriteria?: NonNullable<VerificationCriteria>;
  requiredCapabilities?: string[];
  verifierAddress?: string;
  /** Pin the task to one agent (rent flow); with serviceId, a rental of that service. */
  targetExecutor?: string;
  serviceId?: number;
  /** Public tasks: the display copy (default: the brief's text, cut to 4000 characters). */
  publicBrief?: string;
  /**
   * Private tasks: who may read the brief. Default: every executor the executors endpoint lists for the task's
   * required capabilities on the posting chain (plus targetExecutor and verifierAddress).
   */
  recipients?: { address: string; publicKey: string }[];
}

export interface PostOptions {
  api: MarketApi;
  /** The key's wallet, connected to an RPC of the posting chain (a plain JsonRpcProvider + Wallet works). */
  signer?: Signer;
  /** Where the posting's progress is saved (default: in memory). Use a FileJournal to survive a crash. */
  journal?: PostingJournal;
  /** The posting's id in the journal (default: derived from the wallet and the drafts). */
  postingId?: string;
  /** Give up waiting for a receipt after this long: UNCONFIRMED (default 180 s). */
  confirmTimeoutMs?: number;
  /** Refuse rewards totalling more than this (AMOUNT_ABOVE_MAX). */
  maxAmount?: bigint;
  /** The settlement a client was built against: anything else refuses (POSTING_CHAIN_CHANGED, SETTLEMENT_CHANGED). */
  expect?: Partial<SettlementPin>;
  /**
   * The chain to post on (`base` or `arc`; default the chain `expect` pins, else the posting chain). The careful
   * checks use that chain's entry of the settlement record (its escrow, token and chain id); `signer` must be
   * connected to that chain's RPC.
   */
  chain?: ChainName;
  /** Also wrap private briefs' keys to the service's custody key (`settlement().custodyPublicKey`), so it can re-wrap for agents who register later. */
  custodyPublicKey?: string;
  /** Called after each stage is saved (progress reports; tests throw here to simulate a crash). */
  onStage?: (stage: PostingStage, postingId: string) => void | Promise<void>;
}

/** A posted and listed task. */
export interface PostedTask {
  taskHash: string;
  onChainTaskId: number;
  /** The funding transaction. */
  txHash: string;
  chain: ChainName;
  chainId: number;
  privacy: "private" | "public";
  /** Private tasks: the brief key (hex), to read the brief again. */
  briefKey?: string;
  /** The listed task as the service answers it (GET /api/v1/tasks/{hash}). */
  task: TaskDetail;
}

/** Posts one task: see postTasks. */
export async function postTask(draft: TaskDraft, options: PostOptions): Promise<PostedTask> {
  const [posted] = await postTasks([draft], options);
  return posted;
}

/**
 * Posts tasks: one funding transaction for the batch when the escrow takes batches (one by one otherwise), each
 * task listed. Refuses invalid rows before anything is uploaded (INVALID_ROWS, `details.errors`). Resumable: after
 * an interruption once a funding transaction may have been sent, the error is TX_MAYBE_SENT; calling postTasks again
 * with the same drafts and journal (or postingId) finishes the posting without paying twice.
 */
export async function postTasks(drafts: readonly TaskDraft[], options: PostOptions): Promise<PostedTask[]> {
  const { api, signer } = options;
  if (!signer) refuse("NO_SIGNER", "posting signs the approve and the funding transaction: pass a signer");
  if (!signer.provider) refuse("NO_RPC", "the signer has no provider: connect it to an RPC of the posting chain");
  if (drafts.length === 0) refuse("INVALID_ROWS", "nothing to post", { details: { errors: [] } });
  const wallet = (await signer.getAddress()).toLowerCase();
  const rows = validateRows(drafts, wallet);

  // The key acts as the signer's wallet.
  let keyWallet: string | undefined;
  try {
    keyWallet = (await api.whoami()).address;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) throw error;
    throw new ClientError("OWNER_UNCHECKED", `could not read which wallet the API key acts as: ${String(error)}`, {
      cause: error,
    });
  }
  checkOwner(keyWallet, wallet);

  const pin = pinSettlement(await api.settlement(), options.expect, options.chain);
  await checkRpc(signer, pin);
  checkAmounts(
    rows.map((r) => r.amount),
    options.maxAmount,
  );
  for (const row of rows) {
    const { serviceId, targetExecutor } = row.draft;
    if (serviceId === undefined) continue;
    let quote;
    try {
      quote = await api.service(serviceId);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
    checkQuote(quote, { serviceId, targetExecutor: targetExecutor!, amount: row.amount, token: pin.token });
  }

  const journal = options.journal ?? new MemoryJournal();
  const size = pin.batch.supported ? Math.max(1, Math.min(pin.batch.maxBatch, 50)) : 1;
  const chunks: Row[][] = [];
  for (let i = 0; i < rows.length; i += size) chunks.push(rows.slice(i, i + size));
  const baseId = options.postingId ?? postingIdOf(wallet, rows);
  const posted: PostedTask[] = [];
  for (let i = 0; i < chunks.length; i++) {
    const id = chunks.length === 1 ? baseId : `${baseId}-${i + 1}`;
    posted.push(...(await new Posting(id, chunks[i], pin, wallet, journal, options, signer).run()));
  }
  return posted;
}

// ------------------------------------------------------------------------------------------------------- rows

interface Row {
  index: number;
  draft: TaskDraft;
  bytes: Buffer;
  privacy: "private" | "public";
  amount: bigint;
  duration: number;
  locationZone: string;
}

const MIN_DURATION = 3_600;
const MAX_DURATION = 7_776_000;
const PUBLIC_BRIEF_MAX = 4000;
const MAX_LOCATION_ZONE = 100;

/** The rows as the flow uses them, or INVALID_ROWS listing every refused row (`{ index, code, message }`). */
function validateRows(drafts: readonly TaskDraft[], wallet: string): Row[] {
  const errors: RowError[] = [];
  const rows: Row[] = [];
  const seen = new Map<string, number>();
  drafts.forEach((draft, index) => {
    const bad = (code: string, message: string) =>
      errors.push({ index, code, message: `row ${index + 1}: ${message}` });
    const before = errors.length;
    const bytes = typeof draft.brief === "string" ? Buffer.from(draft.brief, "utf8") : Buffer.from(draft.brief ?? []);
    if (bytes.length === 0) bad("EMPTY_DATA", "the brief is empty");
    const privacy = draft.privacy ?? "private";
    if (privacy !== "private" && privacy !== "public") bad("VALIDATION_ERROR", "privacy must be private or public");
    let amount = 0n;
    const amountText = String(draft.amount ?? "");
    if (!/^[0-9]+$/.test(amountText) || BigInt(amountText) === 0n) {
      bad("INVALID_AMOUNT", "amount must be a whole number above 0 in the token's smallest unit");
    } else amount = BigInt(amountText);
    const durationText = String(draft.duration ?? DEFAULT_DURATION_SECONDS);
    const duration = Number(durationText);
    if (!/^[0-9]+$/.test(durationText) || duration < MIN_DURATION || duration > MAX_DURATION) {
      bad("INVALID_DURATION", `duration must be whole seconds from ${MIN_DURATION} to ${MAX_DURATION}`);
    }
    const locationZone = draft.locationZone ?? DEFAULT_LOCATION_ZONE;
    if (locationZone.length < 1 || locationZone.length > MAX_LOCATION_ZONE) {
      bad("VALIDATION_ERROR", `locationZone must be 1 to ${MAX_LOCATION_ZONE} characters`);
    }
    const mode = draft.verificationMode ?? "manual";
    if (!["manual", "auto", "agent"].includes(mode)) {
      bad("VERIFICATION_MODE_UNSUPPORTED", `verificationMode ${mode} is not supported`);
    }
    if (mode === "auto" && !hasRealRule(draft.verificationCriteria)) {
      bad("AUTO_CRITERIA_REQUIRED", "verificationMode auto needs at least one rule in verificationCriteria");
    }
    if (mode === "agent" && !draft.verifierAddress) bad("NO_VERIFIER", "verificationMode agent needs verifierAddress");
    if (draft.verifierAddress !== undefined) {
      if (!isAddress(draft.verifierAddress)) bad("INVALID_VERIFIER", "verifierAddress must be a 20-byte address");
      else if (draft.verifierAddress.toLowerCase() === wallet) bad("INVALID_VERIFIER", "the verifier is the poster");
    }
    if (draft.targetExecutor !== undefined && !isAddress(draft.targetExecutor)) {
      bad("BAD_ADDRESS", "targetExecutor must be 0x plus 40 hex");
    }
    if (draft.serviceId !== undefined && draft.targetExecutor === undefined) {
      bad("SERVICE_NO_TARGET", "serviceId needs targetExecutor");
    }
    if (privacy === "public" && draft.recipients !== undefined) {
      bad("PUBLIC_TASK_HAS_KEYS", "a public task has no recipients: its brief is plaintext");
    }
    if (draft.publicBrief !== undefined && privacy !== "public") {
      bad("BRIEF_ON_PRIVATE_TASK", "publicBrief is only for public tasks");
    }
    if (draft.publicBrief !== undefined && [...draft.publicBrief].length > PUBLIC_BRIEF_MAX) {
      bad("VALIDATION_ERROR", `publicBrief must be at most ${PUBLIC_BRIEF_MAX} characters`);
    }
    for (const r of draft.recipients ?? []) {
      if (!isAddress(r.address)) bad("BAD_ADDRESS", `recipient ${r.address} is not an address`);
    }
    if (privacy === "public" && bytes.length > 0) {
      const hash = sha256(bytes);
      const first = seen.get(hash);
      if (first !== undefined) bad("TASK_HASH_IN_USE", `the same public brief as row ${first + 1}`);
      else seen.set(hash, index);
    }
    if (errors.length === before) rows.push({ index, draft, bytes, privacy, amount, duration, locationZone });
  });
  if (errors.length > 0) {
    refuse("INVALID_ROWS", `${errors.length} row(s) refused; nothing was uploaded or paid`, { details: { errors } });
  }
  return rows;
}

function hasRealRule(c: VerificationCriteria | undefined): boolean {
  if (!c) return false;
  return (
    (c.min_length ?? 0) > 0 ||
    (c.contains_keywords ?? []).some((k) => k.trim() !== "") ||
    (c.required_fields ?? []).some((f) => f.trim() !== "") ||
    Boolean(c.regex_pattern)
  );
}

/** The same wallet and drafts give the same id: calling again resumes instead of posting twice. */
function postingIdOf(wallet: string, rows: Row[]): string {
  const canonical = JSON.stringify({
    wallet,
    rows: rows.map(({ draft, bytes, privacy, amount, duration, locationZone }) => ({
      ...draft,
      brief: sha256(bytes),
      privacy,
      amount: amount.toString(),
      duration,
      locationZone,
    })),
  });
  return `post_${sha256(Buffer.from(canonical, "utf8")).slice(2, 34)}`;
}

// ---------------------------------------------------------------------------------------------------- posting

const RETRYABLE_INDEX_CODES = new Set(["RECEIPT_NOT_FOUND", "NOT_INDEXED_YET", "NOT_INDEXED", "RATE_LIMIT"]);

class Posting {
  private record!: PostingRecord;
  private readonly sender: TxSender;
  private readonly provider: Provider;

  constructor(
    private readonly id: string,
    private readonly rows: Row[],
    private readonly pin: SettlementPin,
    private readonly wallet: string,
    private readonly journal: PostingJournal,
    private readonly options: PostOptions,
    signer: Signer,
  ) {
    this.sender = new TxSender(signer, { confirmTimeoutMs: options.confirmTimeoutMs });
    this.provider = signer.provider!;
  }

  private get api() {
    return this.options.api;
  }

  private async advance(stage: PostingStage) {
    this.record.stage = stage;
    this.record.updatedAt = new Date().toISOString();
    await this.journal.save(this.record);
    await this.options.onStage?.(stage, this.id);
  }

  async run(): Promise<PostedTask[]> {
    const existing = await this.journal.load(this.id);
    if (existing) {
      // A resumed posting must still go to the same chain, escrow and token.
      pinSettlement(await this.api.settlement(), existing.pin);
      this.record = existing;
    } else {
      await checkBalance(this.provider, this.pin.token, this.wallet, this.total);
      this.record = {
        version: 1,
        id: this.id,
        wallet: this.wallet,
        stage: "prepared",
        pin: this.pin,
        items: await this.prepare(),
        updatedAt: new Date().toISOString(),
      };
      await this.advance("prepared");
    }
    if (this.record.stage === "prepared") await this.upload();
    if (this.record.stage === "uploaded") await this.buildAndApprove();
    if (this.record.stage === "approve-signed") await this.resumeApprove();
    try {
      if (this.record.stage === "approved") await this.fund();
      if (this.record.stage === "create-signed" || this.record.stage === "create-sent") await this.resumeFunding();
      if (this.record.stage === "confirmed") await this.index();
    } catch (error) {
      throw this.maybeSent(error);
    }
    return this.answer();
  }

  /** Encrypts private briefs to their readers; the blobs go into the record so a resume uploads the same bytes. */
  private async prepare(): Promise<JournalItem[]> {
    const executorLists = new Map<string, BriefRecipient[]>();
    const items: JournalItem[] = [];
    for (const row of this.rows) {
      if (row.privacy === "public") {
        items.push({ taskHash: sha256(row.bytes), blob: row.bytes.toString("base64") });
        continue;
      }
      const recipients = await this.recipientsOf(row, executorLists);
      if (recipients.length === 0 && !this.options.custodyPublicKey) {
        refuse("NO_EXECUTORS", `row ${row.index + 1}: no registered agent could read this private brief`, {
          details: { index: row.index, requiredCapabilities: row.draft.requiredCapabilities ?? [] },
        });
      }
      const sealed = sealBrief(row.bytes, recipients, { custodyPublicKey: this.options.custodyPublicKey });
      items.push({
        taskHash: sha256(sealed.blob),
        blob: sealed.blob.toString("base64"),
        briefKey: sealed.key.toString("hex"),
        wrappedKeys: sealed.wrappedKeys,
        custodyWrappedKey: sealed.custodyWrappedKey,
      });
    }
    return items;
  }

  /** Who may read a private brief: the draft's recipients, or the executors able to take it, plus its target and verifier. */
  private async recipientsOf(row: Row, cache: Map<string, BriefRecipient[]>): Promise<BriefRecipient[]> {
    const chosen = new Map<string, BriefRecipient>();
    const add = (r: BriefRecipient) => {
      if (r.address.toLowerCase() !== this.wallet) chosen.set(r.address.toLowerCase(), r);
    };
    const list = async (capabilities: string[]) => {
      const key = capabilities.join(",");
      if (!cache.has(key)) {
        const page = await this.api.executors({
          capabilities: key || undefined,
          chain: pinnedChain(this.pin),
          limit: 200,
        });
        cache.set(
          key,
          page.executors.map((e) => ({ address: e.address, publicKey: e.publicKey })),
        );
      }
      return cache.get(key)!;
    };
    const explicit = row.draft.recipients;
    if (explicit) explicit.forEach(add);
    else if (!row.draft.targetExecutor) (await list(normCaps(row.draft.requiredCapabilities))).forEach(add);
    for (const who of [row.draft.targetExecutor, row.draft.verifierAddress]) {
      if (!who || chosen.has(who.toLowerCase())) continue;
      const found = (await list([])).find((e) => e.address.toLowerCase() === who.toLowerCase());
      if (!found) {
        refuse(
          "NO_EXECUTORS",
          `row ${row.index + 1}: ${who} is not a registered agent with a public key on ${pinnedChain(this.pin)}`,
          {
            details: { index: row.index, address: who.toLowerCase() },
          },
        );
      }
      add(found);
    }
    return [...chosen.values()];
  }

  private async upload() {
    const items = this.record.items;
    const blobs = items.map((i) => Buffer.from(i.blob!, "base64"));
    let stored: { rootHash: string }[];
    if (blobs.length === 1) stored = [await this.api.upload(blobs[0])];
    else {
      try {
        stored = (await this.api.uploadBatch(blobs)).results;
      } catch (error) {
        // A server storing on decentralized storage takes at most 4 items per request.
        if (!(error instanceof ApiError && error.code === "BATCH_TOO_LARGE")) throw error;
        stored = [];
        for (let i = 0; i < blobs.length; i += 4)
          stored.push(...(await this.api.uploadBatch(blobs.slice(i, i + 4))).results);
      }
    }
    items.forEach((item, i) => {
      item.rootHash = stored[i].rootHash;
      delete item.blob;
    });
    await this.advance("uploaded");
  }

  private terms(i: number): TaskBuildTerms {
    const { draft, amount, duration, locationZone, privacy } = this.rows[i];
    const item = this.record.items[i];
    return strip({
      taskHash: item.taskHash,
      amount: amount.toString(),
      locationZone,
      duration: String(duration),
      verificationMode: draft.verificationMode,
      verificationCriteria: draft.verificationCriteria,
      requiredCapabilities: draft.requiredCapabilities,
      rootHash: item.rootHash,
      wrappedKeys: privacy === "private" ? item.wrappedKeys : undefined,
      verifierAddress: draft.verifierAddress,
    });
  }

  private expectedTask(i: number): ExpectedTask {
    const { amount, duration, locationZone, draft } = this.rows[i];
    return {
      taskHash: this.record.items[i].taskHash,
      amount,
      locationZone,
      duration,
      verifierAgent: draft.verifierAddress ? getAddress(draft.verifierAddress) : undefined,
    };
  }

  /** `chain` for the requests of a posting on another chain than the posting chain (none on the posting chain). */
  private get chainField(): { chain?: ChainName } {
    const { pin } = this.record;
    return pinnedChain(pin) === pin.postingChain ? {} : { chain: pinnedChain(pin) };
  }

  private get total() {
    return this.rows.reduce((s, r) => s + r.amount, 0n);
  }

  /** Builds and checks the funding transaction, then approves exactly the reward unless the allowance covers it. */
  private async buildAndApprove() {
    const { pin } = this.record;
    await checkBalance(this.provider, pin.token, this.wallet, this.total);
    let approveTx: UnsignedTx | null | undefined;
    if (this.rows.length === 1) {
      const built = await this.api.buildTask({ ...this.terms(0), token: pin.token, ...this.chainField });
      approveTx = built.approveTx;
      checkEscrowTx(built, pin, this.wallet, { fn: "createTask", token: pin.token, ...this.expectedTask(0) });
      this.record.built = { to: built.unsignedTx.to, data: built.unsignedTx.data };
    } else {
      const built = await this.api.buildTaskBatch({
        token: pin.token,
        tasks: this.rows.map((_, i) => this.terms(i)),
        ...this.chainField,
      });
      approveTx = built.approveTx;
      const want = this.record.items.map((i) => i.taskHash.toLowerCase());
      if (built.taskHashes.map((h) => h.toLowerCase()).join() !== want.join()) {
        refuse("TX_MISMATCH", "the batch answer lists other task hashes, or in another order");
      }
      checkEscrowTx(built, pin, this.wallet, {
        fn: "createTasks",
        token: pin.token,
        tasks: this.rows.map((_, i) => this.expectedTask(i)),
      });
      this.record.built = { to: built.unsignedTx.to, data: built.unsignedTx.data, gas: built.unsignedTx.gas };
    }
    const approve = await this.approvalToSend(approveTx);
    // Right before money moves: the settlement still names the same chain, escrow and token.
    pinSettlement(await this.api.settlement(), pin);
    if (!approve) {
      await this.advance("approved");
      return;
    }
    const signed = await this.sender.send(
      { to: approve.to, data: approve.data },
      {
        beforeBroadcast: async (tx) => {
          this.record.approve = tx;
          await this.advance("approve-signed");
        },
      },
    );
    await this.sender.wait(signed.hash);
    await this.advance("approved");
  }

  /**
   * The approval to sign: the service's approveTx once checked to be exactly approve(escrow, the total) on the token
   * from this wallet; when the service answers none (the allowance covers the total, it says), the allowance is read
   * from the chain, and only if it falls short does this client encode the same exact approve itself.
   */
  private async approvalToSend(approveTx: UnsignedTx | null | undefined): Promise<{ to: string; data: string } | null> {
    const { pin } = this.record;
    if (approveTx) {
      checkApproveTx(approveTx, pin.token, pin.escrow, this.total, this.wallet);
      return { to: approveTx.to, data: approveTx.data };
    }
    const allowance = await readAllowance(this.provider, pin.token, this.wallet, pin.escrow);
    return allowance >= this.total ? null : { to: pin.token, data: encodeApprove(pin.escrow, this.total) };
  }

  private async resumeApprove() {
    const outcome = await this.resumeTx(this.record.approve!);
    if (outcome === "dropped") {
      delete this.record.approve;
      await this.advance("uploaded");
      return this.buildAndApprove();
    }
    await this.advance("approved");
  }

  /** Signs the funding transaction, saves it, broadcasts it, waits for it. */
  private async fund() {
    const built = this.record.built!;
    pinSettlement(await this.api.settlement(), this.record.pin);
    await this.sender.send(
      { to: built.to, data: built.data, ...(built.gas ? { gasLimit: BigInt(built.gas) } : {}) },
      {
        beforeBroadcast: async (tx) => {
          this.record.create = tx;
          await this.advance("create-signed");
        },
      },
    );
    await this.advance("create-sent");
    await this.sender.wait(this.record.create!.hash);
    await this.advance("confirmed");
  }

  private async resumeFunding() {
    const outcome = await this.resumeTx(this.record.create!);
    if (outcome === "dropped") {
      // Its nonce went to another transaction: this one can never be mined, nothing was paid. Sign anew.
      delete this.record.create;
      await this.advance("approved");
      return this.fund();
    }
    await this.advance("confirmed");
  }

  /**
   * A transaction saved before broadcast: mined (its receipt), pending (wait), unknown with its nonce unused
   * (broadcast the same bytes again, then wait), or unknown with its nonce used by another transaction ("dropped").
   */
  private async resumeTx(tx: JournalTx): Promise<"mined" | "dropped"> {
    const receipt = await this.provider.getTransactionReceipt(tx.hash);
    if (receipt) {
      if (receipt.status !== 1)
        throw new MarketError("TX_REVERTED", `transaction ${tx.hash} reverted`, { details: { txHash: tx.hash } });
      return "mined";
    }
    if (!(await this.provider.getTransaction(tx.hash))) {
      const used = await pendingNonce(this.provider, this.wallet);
      if (used > tx.nonce) {
        // Another transaction may have been mined at that nonce; check ours once more before giving it up.
        if (await this.provider.getTransactionReceipt(tx.hash)) return "mined";
        return "dropped";
      }
      if (!tx.raw) {
        refuse("TX_MAYBE_SENT", `transaction ${tx.hash} is unknown to the RPC and this signer cannot re-send it`, {
          details: { txHash: tx.hash, nonce: tx.nonce, postingId: this.id },
        });
      }
      await this.sender.broadcast(tx.raw);
    }
    await this.sender.wait(tx.hash);
    return "mined";
  }

  private indexItem(i: number): IndexItem {
    const { draft, privacy, bytes } = this.rows[i];
    const item = this.record.items[i];
    return strip({
      taskHash: item.taskHash,
      verificationMode: draft.verificationMode,
      verificationCriteria: draft.verificationCriteria,
      requiredCapabilities: draft.requiredCapabilities,
      rootHash: item.rootHash,
      wrappedKeys: privacy === "private" ? item.wrappedKeys : undefined,
      custodyWrappedKey: privacy === "private" ? item.custodyWrappedKey : undefined,
      verifierAddress: draft.verifierAddress,
      targetExecutor: draft.targetExecutor,
      serviceId: draft.serviceId,
      privacy,
      publicBrief:
        privacy === "public"
          ? (draft.publicBrief ?? [...bytes.toString("utf8")].slice(0, PUBLIC_BRIEF_MAX).join(""))
          : undefined,
    });
  }

  /** Lists the funded tasks (retrying while the service cannot see the receipt yet). */
  private async index() {
    const txHash = this.record.create!.hash;
    let results: IndexResult[];
    if (this.rows.length === 1) {
      results = [await retrying(() => this.api.indexTask({ txHash, ...this.indexItem(0), ...this.chainField }))];
    } else {
      const answer = await retrying(() =>
        this.api.indexTaskBatch({ txHash, tasks: this.rows.map((_, i) => this.indexItem(i)), ...this.chainField }),
      );
      const failed = answer.results.filter((r): r is Extract<typeof r, { error: unknown }> => "error" in r);
      if (failed.length > 0) {
        throw new ApiError(
          failed[0].error.code,
          `listing refused ${failed.length} task(s): ${failed[0].error.message}`,
          {
            status: 409,
            details: { results: answer.results, txHash, postingId: this.id },
          },
        );
      }
      results = answer.results as IndexResult[];
    }
    this.record.indexed = results;
    results.forEach((r, i) => (this.record.items[i].onChainTaskId = r.onChainTaskId));
    await this.advance("indexed");
  }

  private async answer(): Promise<PostedTask[]> {
    const { pin } = this.record;
    const out: PostedTask[] = [];
    for (let i = 0; i < this.record.items.length; i++) {
      const item = this.record.items[i];
      out.push({
        taskHash: item.taskHash,
        onChainTaskId: this.record.indexed![i].onChainTaskId,
        txHash: this.record.create!.hash,
        chain: pinnedChain(pin),
        chainId: pin.chainId,
        privacy: this.rows[i].privacy,
        ...(item.briefKey ? { briefKey: item.briefKey } : {}),
        // Listed: the read may lag behind the service's index for a moment.
        task: await retrying(() => this.api.task(item.taskHash), 12, ["NOT_FOUND"]),
      });
    }
    return out;
  }

  /** An interruption once the funding transaction may be out: TX_MAYBE_SENT, saying how to resume. */
  private maybeSent(error: unknown): unknown {
    const create = this.record.create;
    if (!create) return error;
    if (error instanceof MarketError && ["UNCONFIRMED", "TX_MAYBE_SENT"].includes(error.code)) return error;
    if (error instanceof ApiError && error.status < 500 && !RETRYABLE_INDEX_CODES.has(error.code)) return error;
    return new ClientError(
      "TX_MAYBE_SENT",
      `interrupted after the funding transaction ${create.hash} was signed (stage ${this.record.stage}): call ` +
        `postTasks again with the same drafts and journal (postingId ${this.id}) to finish; it never pays twice`,
      {
        details: { postingId: this.id, txHash: create.hash, nonce: create.nonce, stage: this.record.stage },
        cause: error,
      },
    );
  }
}

function normCaps(caps: string[] | undefined): string[] {
  return [...new Set((caps ?? []).map((c) => c.trim().toLowerCase()).filter(Boolean))].sort();
}

/** Drops undefined fields (the service refuses unknown fields, and undefined is noise in the journal). */
function strip<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Retries a call while the service answers a "not yet" code or 5xx (about 30 s in all). */
async function retrying<R>(call: () => Promise<R>, attempts = 12, alsoRetry: string[] = []): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const retryable =
        (error instanceof ApiError &&
          (RETRYABLE_INDEX_CODES.has(error.code) || alsoRetry.includes(error.code) || error.status >= 500)) ||
        (error instanceof ClientError && error.code === "API_UNREACHABLE");
      if (!retryable || attempt >= attempts) throw error;
      const hinted = error instanceof MarketError ? Number(error.details?.retryAfterSeconds) * 1000 : NaN;
      await sleep(Number.isFinite(hinted) && hinted > 0 ? hinted : Math.min(250 * 2 ** (attempt - 1), 5000));
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
