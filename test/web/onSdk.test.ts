/**
 * The web app is a client of the SDK: it reaches the API only through `client/sdk` (no fetch of its own), holds no
 * second copy of the escrow ABI or of the API's types, and imports the SDK by its index (its public exports). Read
 * from web/src as it is; the browser tests prove the behaviour on top of it is unchanged.
 */
import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";

const WEB_SRC = path.join(__dirname, "..", "..", "web", "src");

function sources(dir: string): { file: string; text: string }[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    if (!/\.(ts|tsx)$/.test(entry.name)) return [];
    return [{ file: path.relative(WEB_SRC, full), text: fs.readFileSync(full, "utf8") }];
  });
}

/** The import specifiers of a module's text. */
const importsOf = (text: string) =>
  [...text.matchAll(/\bfrom\s+"([^"]+)"|\bimport\s+"([^"]+)"/g)].map((m) => m[1] ?? m[2]);

describe("web: the app on the SDK", () => {
  const files = sources(WEB_SRC);

  it("reads web/src (a guard: the scan sees the app's modules)", () => {
    expect(files.map((f) => f.file)).to.include.members(["api.ts", "pages/PostTask.tsx", "pages/MyTasks.tsx"]);
  });

  it("calls the API only through the SDK: no fetch, no second API client", () => {
    const calling = files.filter((f) => /\bfetch\s*\(/.test(f.text) && f.file !== "api.ts");
    expect(calling.map((f) => f.file)).to.deep.equal([]);
    // api.ts hands the browser's fetch to the SDK's MarketApi, and only that.
    const api = files.find((f) => f.file === "api.ts")!.text;
    expect(api).to.include("new MarketApi(");
    expect(api.match(/\bfetch\s*\(/g)).to.have.length(1);
  });

  it("holds no ABI of its own: no human-readable fragments, no Interface built in the page", () => {
    const abi = files.filter((f) => /["'](function|event) [A-Za-z]+\(/.test(f.text) || /new Interface\(/.test(f.text));
    expect(abi.map((f) => f.file)).to.deep.equal([]);
  });

  it("imports the SDK by its index and no server module (types included)", () => {
    for (const { file, text } of files) {
      for (const spec of importsOf(text)) {
        expect(spec, `${file} imports ${spec}`).to.not.match(/(^|\/)server\//);
        if (spec.includes("client/sdk")) expect(spec, `${file} imports ${spec}`).to.match(/\/client\/sdk\/index$/);
      }
    }
  });

  it("posts with the SDK's postTask and sends the poster's transactions with its sendTaskOperation", () => {
    const post = files.find((f) => f.file === "pages/PostTask.tsx")!.text;
    expect(post).to.match(/\bpostTask\(/);
    expect(post).to.not.match(/\.approve\(|sendTransaction\(/);
    const mine = files.find((f) => f.file === "pages/MyTasks.tsx")!.text;
    expect(mine).to.match(/\bsendTaskOperation\(/);
    expect(mine).to.not.match(/sendTransaction\(/);
  });
});
