// ESLint (flat config) with typescript-eslint. Beyond the recommended rules, `no-restricted-imports` enforces the
// layering of docs/architecture.md: adapters (api, protocols) -> operations -> domain -> (db | chain),
// indexer -> (db | chain), verifier -> (db | chain), hosting -> domain, and the leaf modules (escrow records and rules,
// errors, config, limits, storage) import none of them. A violation fails `npm run lint` and CI.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/** `no-restricted-imports` patterns forbidding imports of the given server folders (any relative depth). */
const forbid = (folders, why, typeOnlyAllowed = []) => ({
  "no-restricted-imports": [
    "error",
    {
      patterns: [
        ...folders.map((folder) => ({
          regex: `^(\\.\\./)+(server/)?${folder}(/|$)`,
          message: `${why} (docs/architecture.md, "Layers")`,
        })),
        ...typeOnlyAllowed.map((folder) => ({
          regex: `^(\\.\\./)+(server/)?${folder}(/|$)`,
          message: `${why}: only its types (docs/architecture.md, "Layers")`,
          allowTypeImports: true,
        })),
      ],
    },
  ],
});

export default tseslint.config(
  {
    ignores: [
      "node_modules/**",
      "artifacts/**",
      "cache/**",
      "typechain-types/**",
      "coverage/**",
      "dist/**",
      ".devnet/**",
      ".stack/**",
      ".test-build/**",
      "client/web/dist/**",
      "web/dist/**",
      "client/sdk/dist/**",
      "**/*.js",
      "**/*.cjs",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: "module" },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-non-null-assertion": "off",
      "no-constant-condition": ["error", { checkLoops: false }],
      // Validation regexes name the control characters they refuse.
      "no-control-regex": "off",
    },
  },
  // The layers, as the allowed arrows of docs/architecture.md ("Layers"): each block forbids a folder every import
  // its layer may not make. test/server/layers.test.ts proves each forbidden arrow fails on a probe import.
  {
    files: ["server/api/**/*.ts"],
    rules: forbid(
      ["db", "chain", "indexer", "hosting", "verifier", "protocols/(mcp|a2a)"],
      "the REST adapter maps HTTP to operations: no repository, chain, other adapter or process",
    ),
  },
  {
    // The HTTP host: the one app serving every adapter mounts MCP and A2A beside REST's router.
    files: ["server/api/app.ts"],
    rules: forbid(["db", "chain", "indexer", "hosting", "verifier"], "the HTTP app mounts adapters, nothing lower"),
  },
  {
    files: ["server/operations/**/*.ts"],
    rules: forbid(
      ["api", "protocols", "db", "chain", "indexer", "hosting", "verifier"],
      "operations declare the catalog over the domain: no adapter, repository or chain",
    ),
  },
  {
    files: ["server/protocols/**/*.ts"],
    rules: forbid(
      ["api", "db", "chain", "indexer", "hosting", "verifier"],
      "protocols adapt operations and the domain: no other adapter, repository or chain",
    ),
  },
  {
    files: ["server/protocols/mcp/**/*.ts"],
    rules: forbid(
      ["a2a", "api", "db", "chain", "indexer", "hosting", "verifier"],
      "MCP is an adapter: it imports no other adapter",
    ),
  },
  {
    files: ["server/protocols/oauth/**/*.ts"],
    rules: forbid(
      ["mcp", "a2a", "api", "db", "chain", "indexer", "hosting", "verifier"],
      "OAuth (MCP authorization's exchange) is an adapter: it imports no other adapter",
    ),
  },
  {
    files: ["server/protocols/a2a/**/*.ts"],
    rules: forbid(
      ["mcp", "api", "db", "chain", "indexer", "hosting", "verifier"],
      "A2A is an adapter: it imports no other adapter",
    ),
  },
  {
    files: ["server/domain/**/*.ts"],
    rules: forbid(
      ["api", "protocols", "operations", "hosting"],
      "the domain does not import the adapters, the operations, the host or the indexer",
      ["indexer"],
    ),
  },
  {
    files: ["server/db/**/*.ts", "server/chain/**/*.ts"],
    rules: forbid(
      ["api", "operations", "protocols", "domain", "indexer", "verifier", "hosting"],
      "db and chain are the lowest layers: they import only escrow/",
    ),
  },
  {
    files: ["server/hosting/**/*.ts"],
    rules: forbid(
      ["api", "operations", "protocols", "indexer", "verifier", "chain", "db"],
      "the agent host runs agents through the domain and the API over HTTP",
    ),
  },
  {
    files: ["server/indexer/**/*.ts"],
    rules: forbid(
      ["api", "operations", "protocols", "domain", "hosting", "verifier"],
      "the indexer writes to db from chain only",
    ),
  },
  {
    files: ["server/verifier/**/*.ts"],
    rules: forbid(
      ["api", "operations", "protocols", "domain", "hosting", "indexer"],
      "the verifier signs from db and chain: no adapter, domain or indexer",
    ),
  },
  {
    // What the operator sees (metrics, health, request ids, shutdown): reads the database and the indexer's
    // checkpoint, mounted by the HTTP app and the entry points; it serves no operation and drives no process.
    files: ["server/observability/**/*.ts"],
    rules: forbid(
      ["api", "operations", "protocols", "hosting", "verifier"],
      "observability reads the database and the indexer's status: no adapter, operation, host or verifier",
      ["domain"],
    ),
  },
  {
    files: ["server/pubsub/**/*.ts"],
    rules: forbid(
      ["api", "operations", "protocols", "domain", "db", "chain", "indexer", "hosting", "verifier"],
      "pub/sub carries wake-ups between processes over Redis: it imports no layer",
    ),
  },
  {
    files: [
      "server/escrow/**/*.ts",
      "server/errors.ts",
      "server/config.ts",
      "server/limits/**/*.ts",
      "server/storage/**/*.ts",
    ],
    rules: forbid(
      ["api", "operations", "protocols", "domain", "indexer", "db", "chain", "verifier", "hosting"],
      "leaf modules import no layer",
    ),
  },
  {
    // The SDK is a library for other projects: ethers and @noble only. Its wire types are generated into
    // client/sdk/types.ts (npm run sdk:types), so it imports nothing of the service, nor Hardhat.
    files: ["client/sdk/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\./)+(server|test|scripts|typechain-types)(/|$)",
              message: "the SDK is importable by other projects: it does not import server, test or script code",
            },
            { regex: "^hardhat", message: "the SDK does not depend on Hardhat" },
            { regex: "^@nomicfoundation/", message: "the SDK does not depend on Hardhat" },
          ],
        },
      ],
    },
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts", "scripts/**/*.ts"],
    rules: { "@typescript-eslint/no-unused-expressions": "off" },
  },
);
