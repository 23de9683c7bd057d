/**
 * An operation's MCP tool (server/protocols/mcp/tools.ts operationTool): how it splits a call's arguments into the
 * operation's path, query and body fields before `invoke`, and the arguments a tool without a body refuses.
 */
import { expect } from "chai";
import { z } from "zod";
import type { Context } from "koa";
import { operationTool } from "../../../server/protocols/mcp/tools";
import { defineOperation } from "../../../server/operations/operation";
import { AppError } from "../../../server/errors";
import type { Deps } from "../../../server/domain/deps";
import type { Caller } from "../../../server/domain/callers";

const caller: Caller = { wallet: "0x00000000000000000000000000000000000000a1", keyId: 1, via: "api-key" };
const call = { caller, deps: {} as Deps, ctx: {} as Context };

describe("MCP operation tools", () => {
  describe("#run", () => {
    it("gives each argument to the path, query or body field of its name, to both path and query when both name it", async () => {
      const operation = defineOperation({
        method: "post",
        path: "/api/v1/things/:id",
        summary: "A thing",
        tags: [],
        mcp: { tool: "make_thing" },
        auth: "none",
        request: {
          params: z.object({ id: z.string() }),
          query: z.object({ id: z.string().optional(), limit: z.coerce.number().optional() }),
          body: z.object({ note: z.string(), size: z.number() }),
        },
        response: z.unknown(),
        handler: ({ params, query, body }) => ({ params, query, body }),
      });
      const answer = await operationTool("make_thing", operation).run({
        ...call,
        args: { id: "7", note: "x", limit: "5", size: 2 },
      });
      expect(answer).to.deep.equal({
        params: { id: "7" },
        query: { id: "7", limit: 5 },
        body: { note: "x", size: 2 },
      });
    });

    it("refuses arguments that are no path or query field of a tool without a body, each named, __proto__ too", async () => {
      const operation = defineOperation({
        method: "get",
        path: "/api/v1/things",
        summary: "Things",
        tags: [],
        mcp: { tool: "list_things" },
        auth: "none",
        request: { query: z.object({ limit: z.coerce.number().optional() }) },
        response: z.unknown(),
        handler: ({ query }) => query,
      });
      const tool = operationTool("list_things", operation);
      expect(await tool.run({ ...call, args: { limit: "3" } })).to.deep.equal({ limit: 3 });
      const refused = await tool.run({ ...call, args: JSON.parse('{"limit":"5","__proto__":{"a":1},"note":2}') }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).to.be.instanceOf(AppError);
      expect(refused).to.include({
        code: "VALIDATION_ERROR",
        message: "arguments: unknown field(s) __proto__, note",
      });
    });
  });
});
