/**
 * The operation catalog is the one list REST, the OpenAPI document and MCP are generated from: every operation is a
 * REST route and documented; every operation names its MCP tool or says why it is REST only; a tool takes exactly
 * the fields REST takes (path, query and body side by side, the same required ones), and runs the very operation
 * REST runs (so the same pipeline and error codes).
 */
import { expect } from "chai";
import { operations } from "../../../server/operations";
import { allRoutes } from "../../../server/api/routes";
import { buildOpenApiDocument } from "../../../server/api/openapi";
import { MCP_TOOLS } from "../../../server/protocols/mcp/tools";

interface BodySchema {
  $ref?: string;
  allOf?: BodySchema[];
  properties?: object;
  required?: string[];
}

interface OpenApiOperation {
  parameters?: { name: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: BodySchema }> };
}

const document = buildOpenApiDocument(allRoutes, "http://127.0.0.1:8787") as unknown as {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, BodySchema> };
};
/** A body schema's fields and required ones, its `$ref`s to named components followed and its `allOf` merged. */
function resolved(schema: BodySchema | undefined): { properties: object; required: string[] } {
  if (!schema) return { properties: {}, required: [] };
  if (schema.$ref) return resolved(document.components.schemas[schema.$ref.replace("#/components/schemas/", "")]);
  const parts = [
    { properties: schema.properties ?? {}, required: schema.required ?? [] },
    ...(schema.allOf ?? []).map(resolved),
  ];
  return {
    properties: Object.assign({}, ...parts.map((part) => part.properties)),
    required: parts.flatMap((part) => part.required),
  };
}
const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, "{$1}");
const documented = (method: string, path: string) => document.paths[openApiPath(path)]?.[method];

describe("operation catalog", () => {
  it("serves and documents every operation on REST", () => {
    for (const operation of operations) {
      expect(allRoutes, `${operation.method} ${operation.path}`).to.include(operation);
      expect(documented(operation.method, operation.path), `${operation.method} ${operation.path}`).to.be.an("object");
    }
  });

  // A tool runs its operation object itself through invoke, so its auth, posting family and error codes are REST's.
  it("offers every operation as an MCP tool unless it says why it is REST only", () => {
    const toolNames = MCP_TOOLS.map((tool) => tool.name);
    expect(new Set(toolNames).size, "tool names are unique").to.equal(toolNames.length);
    for (const operation of allRoutes) {
      const where = `${operation.method} ${operation.path}`;
      if ("tool" in operation.mcp) {
        const tool = MCP_TOOLS.find((t) => t.name === (operation.mcp as { tool: string }).tool);
        expect(tool?.operation, where).to.equal(operation);
      } else {
        expect(operation.mcp.restOnly.length, `${where}: the reason it is REST only`).to.be.greaterThan(20);
        expect(
          MCP_TOOLS.some((tool) => tool.operation === operation),
          where,
        ).to.equal(false);
      }
    }
    // Every tool but the composite platform_status runs a catalog operation.
    expect(MCP_TOOLS.filter((tool) => !tool.operation).map((tool) => tool.name)).to.deep.equal(["platform_status"]);
  });

  it("gives each tool the input fields REST takes, the same required ones", () => {
    for (const tool of MCP_TOOLS.filter((t) => t.operation)) {
      const operation = tool.operation!;
      const rest = documented(operation.method, operation.path)!;
      const body = resolved(rest.requestBody?.content["application/json"]?.schema);
      const restFields = [...(rest.parameters ?? []).map((p) => p.name), ...Object.keys(body.properties)];
      const restRequired = [...(rest.parameters ?? []).filter((p) => p.required).map((p) => p.name), ...body.required];
      const schema = tool.inputSchema as { properties: object; required?: string[] };
      expect(Object.keys(schema.properties), tool.name).to.have.members(restFields);
      expect(schema.required ?? [], tool.name).to.have.members(restRequired);
    }
  });
});
