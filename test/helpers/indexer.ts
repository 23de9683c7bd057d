/**
 * Helpers for indexer suites: an Indexer over the in-process Hardhat chain, and the check that its projection equals
 * the escrow's own view of every task.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import type { Knex } from "knex";
import { providerChainReader, type ChainReader } from "../../server/chain/escrowLogs";
import { Indexer, type IndexerOptions } from "../../server/indexer/sync";
import { silentLogger } from "../../server/logger";
import { findTaskById } from "../../server/db/repositories/tasks";
import { loadConfigValues } from "../../server/db/repositories/escrowConfig";
import { loadTokens } from "../../server/db/repositories/allowedTokens";
import { loadPausePeriods } from "../../server/db/repositories/pausePeriods";
import type { TaskEscrow } from "../../typechain-types";
import type { TestDb } from "./db";

export const hardhatChain = (): ChainReader => providerChainReader(ethers.provider);

/** An indexer on `testDb` (or another pool `db` on it), stopped by the test database's cleanup. */
export function makeIndexer(
  testDb: TestDb,
  escrowAddress: string,
  startBlock: number,
  overrides: Partial<IndexerOptions> & { maxBlockRange?: number } = {},
): Indexer {
  const indexer = new Indexer({
    db: overrides.db ?? testDb.db,
    chain: overrides.chain ?? hardhatChain(),
    chainName: overrides.chainName,
    network: "hardhat",
    escrowAddress,
    startBlock,
    config: {
      confirmations: 0,
      pollIntervalMs: 20,
      maxBlockRange: overrides.maxBlockRange ?? 2000,
      lockTtlMs: 1500,
      ...overrides.config,
    },
    logger: silentLogger,
    faults: overrides.faults,
  });
  testDb.onCleanup(() => indexer.stop());
  return indexer;
}

/** Steps the indexer until it is level with the chain head. */
export async function syncToHead(indexer: Indexer, maxSteps = 10_000): Promise<void> {
  for (let i = 0; i < maxSteps; i++) {
    if (!(await indexer.step())) return;
  }
  throw new Error("indexer did not reach the head");
}

/** Asserts the stored projection equals getTask (and the extra views) for every task id the escrow issued. */
export async function expectProjectionMatchesChain(db: Knex, escrow: TaskEscrow): Promise<number> {
  const next = Number(await escrow.nextTaskId());
  for (let id = 1; id < next; id++) {
    const onChain = await escrow.getTask(id);
    const stored = await findTaskById(db, id);
    expect(stored, `task ${id} is indexed`).to.not.equal(undefined);
    const row = stored!;
    const where = `task ${id}`;
    expect(row.poster, `${where} poster`).to.equal(onChain.poster.toLowerCase());
    expect(row.worker, `${where} worker`).to.equal(onChain.worker.toLowerCase());
    expect(row.token, `${where} token`).to.equal(onChain.token.toLowerCase());
    expect(row.amount, `${where} amount`).to.equal(onChain.amount.toString());
    expect(row.taskHash, `${where} taskHash`).to.equal(onChain.taskHash);
    expect(row.evidenceHash, `${where} evidenceHash`).to.equal(onChain.evidenceHash);
    expect(row.status, `${where} status`).to.equal(Number(onChain.status));
    expect(row.category, `${where} category`).to.equal(onChain.category);
    expect(row.locationZone, `${where} locationZone`).to.equal(onChain.locationZone);
    expect(row.createdAt, `${where} createdAt`).to.equal(Number(onChain.createdAt));
    expect(row.deadline, `${where} deadline`).to.equal(Number(onChain.deadline));
    expect(row.submissionAttempts, `${where} submissionAttempts`).to.equal(Number(onChain.submissionAttempts));
    expect(row.disputedAt, `${where} disputedAt`).to.equal(Number(onChain.disputedAt));
    expect(row.verifier, `${where} verifier`).to.equal((await escrow.taskVerifier(id)).toLowerCase());
    expect(row.failedVerdictAt, `${where} failedVerdictAt`).to.equal(Number(await escrow.failedVerdictAt(id)));
    expect(row.escalated, `${where} escalated`).to.equal(await escrow.isEscalated(id));
    expect(row.isOpen, `${where} isOpen`).to.equal(await escrow.isOpenTask(id));
  }
  const extra = await db("tasks").where("task_id", ">=", next).count({ n: "*" }).first();
  expect(Number(extra?.n ?? 0), "no task beyond nextTaskId").to.equal(0);
  return next - 1;
}

/** Asserts the stored escrow configuration equals the escrow's views. */
export async function expectConfigMatchesChain(db: Knex, escrow: TaskEscrow, tokens: string[]): Promise<void> {
  const values = await loadConfigValues(db, "base");
  expect(values.feeBps?.value).to.equal((await escrow.feeBps()).toString());
  expect(values.treasury?.value).to.equal((await escrow.treasury()).toLowerCase());
  expect(values.verifier?.value).to.equal((await escrow.verifier()).toLowerCase());
  expect(values.admin?.value).to.equal((await escrow.admin()).toLowerCase());
  expect(values.paused?.value ?? "false").to.equal(String(await escrow.paused()));
  const stored = await loadTokens(db, "base");
  for (const token of tokens) {
    expect(stored[token.toLowerCase()]?.allowed ?? false, `token ${token} allowed`).to.equal(
      await escrow.isTokenAllowed(token),
    );
  }
  const pauses = await loadPausePeriods(db, "base");
  const block = await ethers.provider.getBlock("latest");
  const pausedSeconds = pauses.reduce((sum, p) => sum + ((p.endedAt ?? block!.timestamp) - p.startedAt), 0);
  expect(pausedSeconds, "paused seconds").to.equal(Number(await escrow.totalPausedSeconds()));
}
