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

  // Function-calling dialects take one type per property, and a model fills arguments from the descriptions alone,
  // at every depth: an object's fields, an array's items, a map's values.
  it("describes every tool input property at every depth, with one JSON type and never an empty schema", () => {
    type Schema = Record<string, unknown>;
    const seen: string[] = [];
    const check = (property: Schema, where: string) => {
      seen.push(where);
      expect(Object.keys(property), `${where}: not an empty schema`).to.not.be.empty;
      expect(property.description, `${where}: description`).to.be.a("string").with.length.above(10);
      expect(property.type, `${where}: one JSON type`).to.be.a("string");
      expect(property, `${where}: one JSON type`).to.not.have.any.keys("anyOf", "oneOf", "allOf", "not", "$ref");
      for (const [name, child] of Object.entries((property.properties ?? {}) as Record<string, Schema>)) {
        check(child, `${where}.${name}`);
      }
      if (property.type === "array") {
        expect(property.items, `${where}: its items`).to.be.an("object");
        check(property.items as Schema, `${where}[]`);
      }
      const values = property.additionalProperties;
      if (typeof values === "object" && values !== null) check(values as Schema, `${where}{}`);
    };
    for (const tool of MCP_TOOLS) {
      const properties = (tool.inputSchema as { properties: Record<string, Schema> }).properties;
      for (const [name, property] of Object.entries(properties)) check(property, `${tool.name}.${name}`);
    }
    // The walk reached the nested parts (a batch's tasks and their criteria, a hosted agent's skills, a map's values).
    expect(seen).to.include.members([
      "build_task_batch.tasks[].verificationCriteria.contains_keywords[]",
      "build_task.wrappedKeys{}",
      "create_hosted_agent.skills[].secrets{}",
      "register_executor.verifier.optIn",
    ]);
    const build = (
      MCP_TOOLS.find((t) => t.name === "build_task")!.inputSchema as {
        properties: Record<string, { description: string; type: string; examples?: unknown[] }>;
      }
    ).properties;
    expect(build.amount.description).to.match(/smallest unit/);
    expect(build.amount.examples).to.deep.equal(["5000000"]);
    expect(build.duration.description).to.match(/seconds/);
    expect(build.duration.type).to.equal("string"); // REST also takes a JSON integer
    expect(build.locationZone.description).to.match(/global/);
    const upload = (
      MCP_TOOLS.find((t) => t.name === "upload_brief")!.inputSchema as {
        properties: Record<string, { type: string; format?: string }>;
      }
    ).properties;
    expect(upload.data).to.include({ type: "string", format: "byte" });
    // A query REST takes as a comma-separated string is declared the string it is, not the array it is parsed into.
    const search = (
      MCP_TOOLS.find((t) => t.name === "search_agents")!.inputSchema as { properties: Record<string, Schema> }
    ).properties;
    expect(search.capabilities.type).to.equal("string");
    // A batch's tasks are declared with build_task's fields (but token and chain, given once for the batch), not as an
    // untyped entry.
    const batch = (
      MCP_TOOLS.find((t) => t.name === "build_task_batch")!.inputSchema as { properties: Record<string, Schema> }
    ).properties;
    const entry = batch.tasks.items as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(entry.properties)).to.have.members(
      Object.keys(build).filter((name) => name !== "token" && name !== "chain"),
    );
    expect(batch).to.include.keys(["token", "chain"]);
    expect(entry.required).to.include.members(["taskHash", "amount"]);
  });

  it("annotates every tool truly, and gives each read tool an output schema", () => {
    for (const tool of MCP_TOOLS) {
      const method = tool.operation?.method ?? "get"; // platform_status composes two reads
      expect(tool.annotations, tool.name).to.deep.equal({
        readOnlyHint: method === "get",
        destructiveHint: method === "delete",
        idempotentHint: method !== "post",
        openWorldHint: false,
      });
      if (method === "get") {
        const output = tool.outputSchema as { type: string; properties: Record<string, unknown> } | undefined;
        expect(output?.type, `${tool.name}: outputSchema`).to.equal("object");
        expect(Object.keys(output!.properties), tool.name).to.include("error").and.have.length.above(1);
      } else {
        expect(tool.outputSchema, tool.name).to.equal(undefined);
      }
    }
    // Output schemas in the portable spelling: a nullable value as anyOf branches of one type, never a list of
    // types, and no schema that accepts anything without saying so (the MCP Inspector's --strict check).
    const portable = (schema: Record<string, unknown>, where: string) => {
      expect(schema.type, `${where}: one JSON type`).to.not.be.an("array");
      const constraining = Object.keys(schema).filter(
        (key) => !["description", "title", "default", "examples"].includes(key),
      );
      expect(constraining, `${where}: an empty schema`).to.not.be.empty;
      const children: [string, unknown][] = [
        ...Object.entries((schema.properties ?? {}) as object).map(([name, child]): [string, unknown] => [
          `.${name}`,
          child,
        ]),
        ["[]", schema.items],
        ["{}", schema.additionalProperties],
        ...["anyOf", "oneOf", "allOf"].flatMap((key) =>
          ((schema[key] ?? []) as unknown[]).map((branch, i): [string, unknown] => [`|${key}${i}`, branch]),
        ),
      ];
      for (const [path, child] of children) {
        if (child && typeof child === "object" && !Array.isArray(child))
          portable(child as Record<string, unknown>, where + path);
      }
    };
    for (const tool of MCP_TOOLS) if (tool.outputSchema) portable(tool.outputSchema, `${tool.name} output`);
    expect(MCP_TOOLS.filter((t) => t.annotations.destructiveHint).map((t) => t.name)).to.include.members([
      "deactivate_service",
      "uninstall_skill",
    ]);
  });
});
