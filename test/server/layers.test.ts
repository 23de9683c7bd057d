/**
 * The lint configuration enforces the layers of docs/architecture.md: for each layer, a probe file placed in it
 * importing each folder it may not reach fails `no-restricted-imports`, and a probe of each arrow it may take passes
 * (so the probe itself is sound: a failure is the arrow's, not a broken probe's).
 */
import path from "node:path";
import { expect } from "chai";
import { ESLint } from "eslint";

const root = path.join(__dirname, "..", "..");
const eslint = new ESLint({ cwd: root });

/** The `no-restricted-imports` messages for `import { x } from "<specifier>"` in a file at `file`. */
async function refusals(file: string, specifier: string, typeOnly = false): Promise<string[]> {
  const code = typeOnly
    ? `import type { x } from "${specifier}";\nexport type y = x;\n`
    : `import { x } from "${specifier}";\nexport const y = x;\n`;
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result.messages.filter((m) => m.ruleId === "no-restricted-imports").map((m) => m.message);
}

/** From a file of each layer, the imports it may not make and some it may. */
const LAYERS: { file: string; forbidden: string[]; allowed: string[] }[] = [
  {
    file: "server/api/routes/probe.ts",
    forbidden: [
      "../../db/repositories/tasks",
      "../../chain/escrowCalls",
      "../../indexer/sync",
      "../../hosting/host",
      "../../verifier/verifier",
      "../../protocols/mcp/tools",
      "../../protocols/a2a/jsonRpc",
    ],
    allowed: ["../../operations/invoke", "../../domain/callers", "../../protocols/http/body", "../../errors"],
  },
  {
    file: "server/api/app.ts",
    forbidden: ["../db/knex", "../chain/gateway", "../indexer", "../hosting/host", "../verifier"],
    allowed: ["../protocols/mcp/endpoint", "../protocols/a2a/jsonRpc", "./router"],
  },
  {
    file: "server/operations/probe.ts",
    forbidden: [
      "../api/router",
      "../protocols/mcp/tools",
      "../db/repositories/tasks",
      "../chain/escrowCalls",
      "../indexer/sync",
      "../hosting/host",
      "../verifier/verifier",
    ],
    allowed: ["../domain/posting", "./operation", "../errors"],
  },
  {
    file: "server/protocols/mcp/probe.ts",
    forbidden: [
      "../a2a/jsonRpc",
      "../../api/router",
      "../../db/repositories/tasks",
      "../../chain/escrowCalls",
      "../../indexer/sync",
      "../../hosting/host",
      "../../verifier/verifier",
    ],
    allowed: ["../../operations/invoke", "../../domain/callers", "../http/body", "./tools"],
  },
  {
    file: "server/protocols/oauth/probe.ts",
    forbidden: [
      "../mcp/endpoint",
      "../a2a/jsonRpc",
      "../../api/router",
      "../../db/repositories/oauth",
      "../../chain/escrowCalls",
      "../../hosting/host",
    ],
    allowed: ["../../domain/oauth", "../http/body", "../../errors"],
  },
  {
    file: "server/protocols/a2a/probe.ts",
    forbidden: ["../mcp/tools", "../../api/router", "../../db/repositories/tasks", "../../chain/escrowCalls"],
    allowed: ["../../domain/listing", "../http/body", "../cards", "./states"],
  },
  {
    file: "server/domain/probe.ts",
    forbidden: [
      "../api/router",
      "../protocols/mcp/tools",
      "../operations/invoke",
      "../hosting/host",
      "../indexer/sync",
    ],
    allowed: ["../db/repositories/tasks", "../chain/escrowCalls", "../escrow/rules", "../errors"],
  },
  {
    file: "server/db/repositories/probe.ts",
    forbidden: [
      "../../api/router",
      "../../operations/invoke",
      "../../protocols/mcp/tools",
      "../../domain/posting",
      "../../indexer/sync",
      "../../verifier/verifier",
      "../../hosting/host",
    ],
    allowed: ["../../escrow/rules", "./util"],
  },
  {
    file: "server/chain/probe.ts",
    forbidden: ["../api/router", "../operations/invoke", "../domain/posting", "../indexer/sync", "../verifier"],
    allowed: ["../escrow/rules", "../errors"],
  },
  {
    file: "server/indexer/probe.ts",
    forbidden: ["../api/router", "../operations/invoke", "../protocols/cards", "../domain/posting", "../verifier"],
    allowed: ["../db/repositories/tasks", "../chain/escrowLogs", "../escrow/rules"],
  },
  {
    file: "server/verifier/probe.ts",
    forbidden: ["../api/router", "../operations/invoke", "../protocols/cards", "../domain/posting", "../indexer/sync"],
    allowed: ["../db/repositories/verifierIntents", "../chain/gateway", "../logger"],
  },
  {
    file: "server/hosting/probe.ts",
    forbidden: [
      "../api/router",
      "../operations/invoke",
      "../protocols/mcp/tools",
      "../indexer/sync",
      "../verifier",
      "../db/knex",
      "../db/repositories/agentHosts",
    ],
    allowed: ["../domain/callers", "../domain/agents/leases", "../config"],
  },
  {
    file: "server/observability/probe.ts",
    forbidden: ["../api/router", "../operations/invoke", "../protocols/mcp/tools", "../hosting/host", "../verifier"],
    allowed: ["../db/repositories/checkpoints", "../indexer/sync", "../logger"],
  },
  {
    file: "server/pubsub/probe.ts",
    forbidden: ["../api/router", "../domain/deps", "../db/knex", "../chain/gateway", "../indexer/sync"],
    allowed: ["ioredis"],
  },
  {
    file: "server/escrow/probe.ts",
    forbidden: ["../api/router", "../operations/invoke", "../domain/posting", "../db/knex", "../chain/gateway"],
    allowed: ["./rules"],
  },
  {
    file: "server/limits/probe.ts",
    forbidden: ["../api/router", "../domain/deps", "../db/knex"],
    allowed: ["./store"],
  },
];

describe("lint: the layers' arrows", () => {
  for (const { file, forbidden, allowed } of LAYERS) {
    describe(file.replace(/\/probe\.ts$/, "/"), () => {
      for (const specifier of forbidden) {
        it(`refuses an import of ${specifier}`, async () => {
          expect(await refusals(file, specifier)).to.have.length(1);
        });
      }
      it(`allows ${allowed.join(", ")}`, async () => {
        for (const specifier of allowed) expect(await refusals(file, specifier), specifier).to.deep.equal([]);
      });
    });
  }

  describe("client/sdk/", () => {
    for (const specifier of ["../../server/domain/schemas/posting", "../../server/errors", "../../test/helpers/api"]) {
      it(`refuses even a type-only import of ${specifier}`, async () => {
        expect(await refusals("client/sdk/probe.ts", specifier, true)).to.have.length(1);
      });
    }
    it("allows its own modules and ethers", async () => {
      for (const specifier of ["./types", "ethers"])
        expect(await refusals("client/sdk/probe.ts", specifier)).to.deep.equal([]);
    });
  });
});
