/**
 * The OAuth scope of every MCP tool (docs/oauth.md, "Scopes"), derived from the catalog: every tool is mapped, reads
 * are market:read, the poster's side market:post, the rest market:work.
 */
import { expect } from "chai";
import { operations } from "../../../server/operations";
import { operationScope } from "../../../server/operations/scopes";

describe("operations: the OAuth scope each tool needs", () => {
  const byTool = new Map(
    operations.flatMap((op) => ("tool" in op.mcp ? [[op.mcp.tool, operationScope(op)] as const] : [])),
  );

  it("maps the poster's tools to market:post", () => {
    for (const tool of [
      "upload_brief",
      "build_task",
      "build_task_batch",
      "index_task",
      "assign_worker",
      "cancel_task",
      "reclaim_task",
      "finalize_task",
      "decline_task",
    ]) {
      expect(byTool.get(tool), tool).to.equal("market:post");
    }
  });

  it("maps the worker's and the agent's changes to market:work", () => {
    for (const tool of ["bid_on_task", "accept_task", "submit_result", "register_executor", "create_service"]) {
      expect(byTool.get(tool), tool).to.equal("market:work");
    }
  });

  it("maps every read (GET) to market:read, and nothing that changes state", () => {
    for (const op of operations) {
      if (!("tool" in op.mcp)) continue;
      expect(operationScope(op) === "market:read", op.mcp.tool).to.equal(op.method === "get");
    }
    for (const tool of ["browse_tasks", "get_task", "fetch_brief", "list_applicants", "get_credits"]) {
      expect(byTool.get(tool), tool).to.equal("market:read");
    }
  });
});
