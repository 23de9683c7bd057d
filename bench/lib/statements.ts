/**
 * The statements the API sends while a measurement runs, counted by their text through knex's "query" event (every
 * statement announces itself there, the direct better-sqlite3 reads of db/repositories/util.ts too): how many a
 * request costs, and which. On PostgreSQL each one is a round trip and the driver's parsing of its answer, so this is
 * the first thing to read beside the server's CPU a request.
 */
import type { Knex } from "knex";
import { fmt } from "./format";

export interface StatementCounter {
  /** Starts counting afresh. */
  reset(): void;
  /** The statements counted since the last reset, most frequent first, as lines per request of `requests`. */
  report(requests: number, top?: number): string[];
  /** Stops listening. */
  close(): void;
}

/** The first words of a statement's text, enough to tell the repositories' statements apart. */
const label = (sql: string, width = 90) => {
  const flat = sql.replace(/\s+/g, " ").trim();
  return flat.length > width ? `${flat.slice(0, width)}...` : flat;
};

/** The data version's statement (db/repositories/dataVersion.ts) on either database. */
const VERSION_STATEMENT = /pg_current_snapshot|data_version/;

export function countStatements(db: Knex): StatementCounter {
  let counts = new Map<string, number>();
  /** The data versions read: each new one is a miss of every cache keyed by it (the task rows, the pages). */
  let versions = new Set<string>();
  const onQuery = (query: { sql: string }) => counts.set(query.sql, (counts.get(query.sql) ?? 0) + 1);
  const onResponse = (response: unknown, query: { sql: string }) => {
    if (!VERSION_STATEMENT.test(query.sql)) return;
    const rows = Array.isArray(response) ? response : (response as { rows?: unknown[] } | undefined)?.rows;
    versions.add(JSON.stringify(rows?.[0]));
  };
  db.on("query", onQuery);
  db.on("query-response", onResponse);
  return {
    reset: () => {
      counts = new Map();
      versions = new Set();
    },
    report(requests, top = 4) {
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      const per = (n: number) => fmt(n / Math.max(1, requests), 3);
      const lines = [
        `${per(total)} statements a request (${fmt(total)} in all); ${fmt(versions.size)} distinct data versions read`,
      ];
      for (const [sql, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, top)) {
        lines.push(`  ${per(n)}: ${label(sql)}`);
      }
      return lines;
    },
    close: () => {
      db.off("query", onQuery);
      db.off("query-response", onResponse);
    },
  };
}
