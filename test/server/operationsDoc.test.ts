/**
 * docs/operations.md documents every environment variable: the table under "Environment variables" must name each
 * variable the configuration schema reads (server/config.ts), each one the server's entry points, the scripts and
 * Hardhat's configuration read from the environment, and nothing else (no stale rows).
 */
import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { CONFIG_VARIABLES } from "../../server/config";

const ROOT = path.join(__dirname, "..", "..");

/** Rows of the table under `## Environment variables`: name -> its cells. */
function documentedVariables(): Map<string, string[]> {
  const doc = fs.readFileSync(path.join(ROOT, "docs", "operations.md"), "utf8");
  const section = doc.split(/^## Environment variables$/m)[1]?.split(/^## /m)[0];
  if (!section) throw new Error('docs/operations.md has no "## Environment variables" section');
  const rows = new Map<string, string[]>();
  for (const line of section.split("\n")) {
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[0] ?? "")?.[1];
    if (!name) continue;
    expect(rows.has(name), `${name} is documented twice`).to.equal(false);
    rows.set(name, cells);
  }
  return rows;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return entry.name.endsWith(".ts") ? [file] : [];
  });
}

/** Variables read as `process.env.X`, `process.env["X"]` or, where `const env = process.env`, `env.X`. */
export function variablesReadIn(source: string): string[] {
  const names = new Set<string>();
  for (const match of source.matchAll(/process\.env(?:\.([A-Z][A-Z0-9_]*)|\[\s*["']([A-Z][A-Z0-9_]*)["']\s*\])/g)) {
    names.add(match[1] ?? match[2]);
  }
  if (/\bconst env = process\.env\b/.test(source)) {
    for (const match of source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)) names.add(match[1]);
  }
  return [...names];
}

/** What the configuration, the server's processes, the scripts (the devnet's included) and Hardhat read. */
function variablesRead(): Map<string, string> {
  const read = new Map<string, string>();
  for (const name of CONFIG_VARIABLES) read.set(name, "server/config.ts");
  const files = [
    ...sourceFiles(path.join(ROOT, "server")),
    ...sourceFiles(path.join(ROOT, "scripts")),
    path.join(ROOT, "hardhat.config.ts"),
  ];
  for (const file of files) {
    for (const name of variablesReadIn(fs.readFileSync(file, "utf8"))) {
      if (!read.has(name)) read.set(name, path.relative(ROOT, file));
    }
  }
  return read;
}

describe("docs/operations.md: the environment variables table", () => {
  it("finds variables however a file reads them (the scan this test relies on)", () => {
    const source = [
      "const a = process.env.API_URL;",
      'const b = process.env["DEVNET_PORT"];',
      "const env = process.env;",
      "if (env.SETTLEMENT_TOKEN) use(env.FEE_BPS);",
      "const lower = process.env.npm_config_x;",
    ].join("\n");
    expect(variablesReadIn(source)).to.have.members(["API_URL", "DEVNET_PORT", "SETTLEMENT_TOKEN", "FEE_BPS"]);
    expect(variablesReadIn("other.env.NOT_PROCESS_ENV")).to.deep.equal([]);
  });

  it("documents every variable the configuration, the processes, the scripts and the devnet read", () => {
    const documented = documentedVariables();
    const missing = [...variablesRead()].filter(([name]) => !documented.has(name)).map(([n, f]) => `${n} (${f})`);
    expect(missing, "add these to docs/operations.md, Environment variables").to.deep.equal([]);
    expect(CONFIG_VARIABLES).to.include.members(["DATABASE_URL", "METRICS_PORT", "SHUTDOWN_TIMEOUT_MS"]);
  });

  it("names no variable that nothing reads", () => {
    const read = variablesRead();
    const stale = [...documentedVariables().keys()].filter((name) => !read.has(name));
    expect(stale, "remove these rows from docs/operations.md or read them").to.deep.equal([]);
  });

  it("gives each variable a default, what it does, who reads it and whether it is secret", () => {
    const processes = new Set(["api", "indexer", "host", "db", "deploy", "upgrade", "hardhat", "devnet", "stack"]);
    for (const [name, cells] of documentedVariables()) {
      expect(cells, name).to.have.length(5);
      const [, fallback, what, readBy, secret] = cells;
      expect(fallback, `${name}: default`).to.not.equal("");
      expect(what, `${name}: what it does`).to.have.length.above(10);
      for (const reader of readBy.split(",").map((r) => r.trim())) {
        expect(processes.has(reader), `${name}: unknown reader "${reader}"`).to.equal(true);
      }
      expect(secret, `${name}: secret`).to.match(/^(no|\*\*yes\*\*|yes .+)$/);
    }
    for (const key of ["VERIFIER_PRIVATE_KEY", "CUSTODY_PRIVATE_KEY", "AGENT_KEY_ENCRYPTION_KEY", "AGENT_JWT_SECRET"]) {
      expect(documentedVariables().get(key)![4], key).to.equal("**yes**");
    }
  });
});
