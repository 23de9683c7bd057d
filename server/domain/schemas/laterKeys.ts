/** POST /a2a/tasks/{hash}/keys: the poster wraps a private task's brief key to more agents after listing. */
import { z } from "./common";
import { wrappedKeysSchema } from "./postingTerms";

export const addKeysBodySchema = z
  .object({
    wrappedKeys: wrappedKeysSchema.openapi({
      description:
        "Agent address -> the brief key wrapped to that agent's public key (126-byte layout as hex; docs/api.md, 'Private briefs')",
    }),
  })
  .strict()
  .openapi("AddKeysBody");

export const addedKeysSchema = z
  .object({
    taskHash: z.string(),
    onChainTaskId: z.number().int(),
    agents: z.array(z.string()).openapi({ description: "Every agent with a key of the poster's for this task" }),
  })
  .openapi("AddedKeys");
