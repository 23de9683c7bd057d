import type { Knex } from "knex";

/** One schema change: `up` applies it, `down` undoes it. A released migration never changes. */
export interface Migration {
  name: string;
  up(db: Knex): Promise<void>;
  down(db: Knex): Promise<void>;
}
