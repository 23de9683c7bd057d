/** Schema of GET /api/v1/stats. */
import { z } from "./common";

export const statsSchema = z
  .object({
    openTasks: z.number().int(),
    totalAgents: z.number().int(),
    activeAgents: z.number().int(),
    registeredUsers: z.number().int(),
    completedTasks: z.number().int(),
  })
  .openapi("Stats");

export type Stats = z.infer<typeof statsSchema>;
