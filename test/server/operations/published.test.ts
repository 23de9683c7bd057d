/**
 * What the service publishes to its clients stays as it is when its code is reorganised: the OpenAPI document and the
 * MCP tool list (names, annotations and input schemas, by name) equal the recorded ones, descriptions aside (a description may
 * be reworded; a path, schema, code or tool name may not change unnoticed). After a deliberate change, record the new
 * ones with `UPDATE_PUBLISHED=1 npx hardhat test test/server/operations/published.test.ts` then `npx prettier --write test/server/operations/published.json`, and review the diff.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { buildOpenApiDocument } from "../../../server/api/openapi";
import { allRoutes } from "../../../server/api/routes";
import { MCP_TOOLS } from "../../../server/protocols/mcp/tools";

const RECORDED = path.join(__dirname, "published.json");

/** The value with every `description` field removed, at any depth. */
function withoutDescriptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDescriptions);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "description")
      .map(([key, field]) => [key, withoutDescriptions(field)]),
  );
}

function published() {
  return withoutDescriptions({
    openapi: buildOpenApiDocument(allRoutes, "http://127.0.0.1:8787"),
    // By name: the list follows the catalog's order, which is not part of the interface.
    mcpTools: MCP_TOOLS.map((tool) => ({
      name: tool.name,
      readOnly: tool.readOnly,
      inputSchema: tool.inputSchema,
    })).sort((a, b) => a.name.localeCompare(b.name)),
  });
}

describe("published interfaces", () => {
  const current = JSON.parse(JSON.stringify(published())) as { openapi: unknown; mcpTools: { name: string }[] };
  if (process.env.UPDATE_PUBLISHED === "1") writeFileSync(RECORDED, `${JSON.stringify(current, null, 1)}\n`);
  const recorded = JSON.parse(readFileSync(RECORDED, "utf8")) as typeof current;

  it("serves the recorded OpenAPI document, descriptions aside", () => {
    expect(current.openapi).to.deep.equal(recorded.openapi);
  });

  it("lists the recorded 52 MCP tools with their input schemas", () => {
    expect(current.mcpTools.map((tool) => tool.name)).to.have.length(52);
    expect(current.mcpTools).to.deep.equal(recorded.mcpTools);
  });
});
