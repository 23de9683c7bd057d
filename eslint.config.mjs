// ESLint (flat config) with typescript-eslint. Beyond the recommended rules, `no-restricted-imports` enforces the
// layering of docs/architecture.md: api -> domain -> (db | chain), indexer -> (db | chain), and the leaf modules
// (escrow records and rules, errors, config) import none of them. A violation fails `npm run lint` and CI.
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
      "client/web/dist/**",
      "web/dist/**",
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
  {
    files: ["server/domain/**/*.ts"],
    rules: forbid(["api", "protocols"], "the domain does not import the API, the protocols or the indexer", [
      "indexer",
    ]),
  },
  {
    files: ["server/protocols/**/*.ts"],
    rules: forbid(["api", "db", "indexer"], "protocols adapt the domain: they call it, not the API or the database"),
  },
  {
    files: ["server/db/**/*.ts", "server/chain/**/*.ts"],
    rules: forbid(
      ["api", "domain", "indexer", "verifier", "protocols"],
      "db and chain are the lowest layers: they import only escrow/",
    ),
  },
  {
    files: ["server/hosting/**/*.ts"],
    rules: forbid(
      ["api", "protocols", "indexer"],
      "the agent host runs agents through the domain and the API over HTTP",
    ),
  },
  { files: ["server/indexer/**/*.ts"], rules: forbid(["api", "domain"], "the indexer writes to db from chain only") },
  {
    files: ["server/escrow/**/*.ts", "server/errors.ts", "server/config.ts"],
    rules: forbid(["api", "domain", "indexer", "db", "chain", "verifier", "protocols"], "leaf modules import no layer"),
  },
  {
    // The SDK is a library for other projects: ethers, @noble and zod only. It may take the service's types from its
    // zod schemas and error codes (type-only imports, erased at runtime), never its code, nor Hardhat.
    files: ["client/sdk/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\./)+server/domain/schemas/",
              message: "the SDK takes only the types of the service's schemas (client/sdk/README.md)",
              allowTypeImports: true,
            },
            {
              regex: "^(\\.\\./)+server/errors$",
              message: "the SDK takes only the type of the service's error codes",
              allowTypeImports: true,
            },
            {
              regex: "^(\\.\\./)+(server|test|scripts|typechain-types)(/|$)(?!domain/schemas/|errors$)",
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
