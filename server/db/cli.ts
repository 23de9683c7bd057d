/** `npm run db:migrate` brings the schema up to date; `npm run db:reset` drops and recreates it. */
import { loadConfig } from "../config";
import { createDb, dbOptions } from "./knex";
import { migrateLatest, resetDatabase } from "./migrations";

async function main(command: string | undefined) {
  const config = loadConfig();
  const db = createDb(dbOptions(config));
  const where = config.databaseUrl ? "PostgreSQL (DATABASE_URL)" : config.sqliteFile;
  try {
    if (command === "reset") {
      await resetDatabase(db);
      console.log(`dropped every table in ${where}`);
    } else if (command !== "migrate") {
      throw new Error(`unknown command ${command}: use migrate or reset`);
    }
    const applied = await migrateLatest(db, { postingChain: config.api.postingChain });
    console.log(applied.length ? `applied ${applied.join(", ")} to ${where}` : `${where} is up to date`);
  } finally {
    await db.destroy();
  }
}

main(process.argv[2]).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
