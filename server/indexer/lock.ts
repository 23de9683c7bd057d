/**
 * The writer lock: exactly one indexer writes to a database at a time; a second one waits. PostgreSQL uses a
 * session advisory lock (released by the server when the holder's connection dies); SQLite a lease row renewed
 * while held (taken over once a dead holder's lease expires).
 */
import crypto from "node:crypto";
import type { Knex } from "knex";
import { dialectOf } from "../db/knex";
import { releaseLease, renewLease, tryAcquireLease } from "../db/repositories/indexerLock";
import type { ChainName } from "../escrow/records";
import { realTimers, type Timers } from "../chain/clock";

export interface WriterLock {
  /** Waits until the lock is held or `signal` aborts; returns whether it is held. */
  acquire(signal: AbortSignal): Promise<boolean>;
  /** Whether the lock is still held (a lease may have been lost). */
  held(): boolean;
  release(): Promise<void>;
}

/**
 * The writer lock of `name` on `chain`: one writer per database and chain. Its waits, lease renewals and lease clock
 * run on `timers`.
 */
export function createWriterLock(
  db: Knex,
  chain: ChainName,
  name: string,
  ttlMs: number,
  timers: Timers = realTimers,
): WriterLock {
  return dialectOf(db) === "postgres"
    ? advisoryLock(db, `${chain}/${name}`, timers)
    : leaseLock(db, chain, name, ttlMs, timers);
}

function leaseLock(db: Knex, chain: ChainName, name: string, ttlMs: number, timers: Timers): WriterLock {
  const owner = `${process.pid}-${crypto.randomBytes(6).toString("hex")}`;
  let isHeld = false;
  let stopRenewing: (() => void) | undefined;
  return {
    async acquire(signal) {
      while (!signal.aborted) {
        if (await tryAcquireLease(db, chain, name, owner, ttlMs, timers.now())) {
          isHeld = true;
          stopRenewing?.();
          stopRenewing = timers.every(Math.max(200, Math.floor(ttlMs / 3)), () =>
            // A renewal that fails (or errs) means another process may take the lease: stop writing until re-held.
            renewLease(db, chain, name, owner, ttlMs, timers.now())
              .then((ok) => {
                if (!ok) isHeld = false;
              })
              .catch(() => {
                isHeld = false;
              }),
          );
          return true;
        }
        await timers.sleep(Math.min(1000, Math.max(100, Math.floor(ttlMs / 5))), signal);
      }
      return false;
    },
    held: () => isHeld,
    async release() {
      stopRenewing?.();
      stopRenewing = undefined;
      if (isHeld) await releaseLease(db, chain, name, owner).catch(() => undefined);
      isHeld = false;
    },
  };
}

function advisoryLock(db: Knex, name: string, timers: Timers): WriterLock {
  const searchPath = String((db.client.config as { searchPath?: string[] }).searchPath ?? "public");
  const key = crypto.createHash("sha256").update(`${searchPath}/${name}`).digest().readBigInt64BE(0).toString();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let connection: any;
  let isHeld = false;
  return {
    async acquire(signal) {
      // A session lost earlier still holds a pool connection: give it back before taking another.
      if (connection) await db.client.releaseConnection(connection).catch(() => undefined);
      connection = await db.client.acquireConnection();
      connection.on?.("error", () => {
        isHeld = false;
      });
      while (!signal.aborted) {
        const result = await connection.query("select pg_try_advisory_lock($1::bigint) as ok", [key]);
        if (result.rows[0].ok) {
          isHeld = true;
          return true;
        }
        await timers.sleep(250, signal);
      }
      await db.client.releaseConnection(connection);
      connection = undefined;
      return false;
    },
    held: () => isHeld,
    async release() {
      if (!connection) return;
      if (isHeld) await connection.query("select pg_advisory_unlock($1::bigint)", [key]).catch(() => undefined);
      await db.client.releaseConnection(connection);
      connection = undefined;
      isHeld = false;
    },
  };
}
