/**
 * The hosted agents' built-in skills (server/domain/agents/skills): the catalog, the deterministic text and JSON
 * skills with exact results, config errors naming the field, the webhook skill against a local endpoint (signature
 * checked by the endpoint, timeouts, errors, abort, address rules) and the verifier's judgement.
 */
import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { AppError } from "../../../../server/errors";
import { verifyBodySchema } from "../../../../server/domain/schemas/delivery";
import { SKILLS, capabilitiesFor, catalogView, findSkill } from "../../../../server/domain/agents/skills/catalog";
import { RUNNABLE_SKILLS, findRunnableSkill } from "../../../../server/hosting/skills/catalog";
import type { RunnableSkill, SkillContext, SkillJob } from "../../../../server/hosting/skills/types";
import { checkText } from "../../../../server/hosting/skills/text";
import { judgeWork } from "../../../../server/hosting/skills/verifier";
import { WEBHOOK_MAX_ANSWER_BYTES } from "../../../../server/hosting/skills/webhook";

const skill = (id: string): RunnableSkill => {
  const found = findRunnableSkill(id);
  if (!found) throw new Error(`no skill ${id}`);
  return found;
};

const job = (briefText: string, overrides: Partial<SkillJob> = {}): SkillJob => ({
  taskHash: `0x${"ab".repeat(32)}`,
  briefText,
  requiredCapabilities: ["text"],
  attempt: 1,
  ...overrides,
});

const context = (config: Record<string, unknown>, overrides: Partial<SkillContext> = {}): SkillContext => ({
  config,
  secrets: {},
  log: () => {},
  signal: new AbortController().signal,
  ...overrides,
});

/** Runs `id` with `config` (parsed as an install would be) on `brief`. */
const run = (id: string, brief: string, config: unknown = {}) =>
  skill(id).run(job(brief), context(skill(id).parseConfig(config)));

/** The error `promise` rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection, got a result");
}

/** The error `action` throws (fails the test when it does not). */
function thrown(action: () => unknown): Error {
  try {
    action();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error, got none");
}

const ARTICLE =
  "Escrow holds the reward until the work is verified. The weather was pleasant yesterday. " +
  "Verified work releases the escrow reward to the worker. Cats sleep a lot.";

describe("hosted agent skills", () => {
  describe("the catalog", () => {
    it("finds each skill by id, and nothing for an unknown id", () => {
      expect(SKILLS.map((s) => s.id)).to.deep.equal([
        "summary",
        "keywords",
        "text-checks",
        "json",
        "webhook",
        "verifier",
      ]);
      for (const s of SKILLS) expect(findSkill(s.id)).to.equal(s);
      expect(findSkill("nope")).to.equal(undefined);
      expect(Object.isFrozen(SKILLS)).to.equal(true);
    });

    it("gives every skill of the catalog its runtime in the worker, with the catalog's definition", () => {
      expect(RUNNABLE_SKILLS.map((s) => s.id)).to.deep.equal(SKILLS.map((s) => s.id));
      for (const s of SKILLS) {
        const runnable = findRunnableSkill(s.id)!;
        expect(runnable.run, s.id).to.be.a("function");
        expect({ ...runnable, run: undefined }, s.id).to.deep.equal({ ...s, run: undefined });
      }
      expect(findRunnableSkill("nope")).to.equal(undefined);
    });

    it("lists each skill's id, capabilities, secrets and config fields publicly", () => {
      const view = catalogView().skills;
      expect(view.map((s) => [s.id, s.capabilities, s.requiredSecrets])).to.deep.equal([
        ["summary", ["summarise", "text"], []],
        ["keywords", ["keywords", "text"], []],
        ["text-checks", ["text-checks"], []],
        ["json", ["json"], []],
        ["webhook", [], ["signingSecret"]],
        ["verifier", ["verify"], []],
      ]);
      expect(view.find((s) => s.id === "webhook")!.configDependentCapabilities).to.equal(true);
      expect(view.find((s) => s.id === "summary")!.configDependentCapabilities).to.equal(false);
      expect(view.find((s) => s.id === "webhook")!.config.map((f) => [f.name, f.required])).to.deep.equal([
        ["url", true],
        ["capabilities", true],
        ["timeoutMs", false],
      ]);
    });

    it("lists exactly the config fields parseConfig fills in, with the defaults it uses", () => {
      for (const s of SKILLS.filter((s) => s.id !== "webhook")) {
        const defaults = s.parseConfig(undefined);
        const listed = Object.fromEntries(s.configFields.filter((f) => "default" in f).map((f) => [f.name, f.default]));
        expect(defaults, s.id).to.deep.equal(listed);
        for (const f of s.configFields) {
          if (f.required) expect(() => s.parseConfig({}), `${s.id}.${f.name}`).to.throw(`config.${f.name}`);
        }
      }
    });

    it("gives an install its effective capabilities: fixed ones, or the webhook's configured ones", () => {
      expect(capabilitiesFor(skill("summary"), skill("summary").parseConfig({}))).to.deep.equal(["summarise", "text"]);
      const webhookConfig = skill("webhook").parseConfig({
        url: "https://agent.example.com/run",
        capabilities: ["Translate", "code-review", " translate "],
      });
      expect(capabilitiesFor(skill("webhook"), webhookConfig)).to.deep.equal(["translate", "code-review"]);
    });

    it("refuses unknown config fields, naming them", () => {
      for (const s of SKILLS) {
        const required = s.id === "webhook" ? { url: "https://agent.example.com/run", capabilities: ["x"] } : {};
        const error = thrown(() => s.parseConfig({ ...required, surprise: 1 }));
        expect(error, s.id).to.be.instanceOf(AppError);
        expect((error as AppError).code).to.equal("VALIDATION_ERROR");
        expect(error.message, s.id).to.match(/config.*surprise/);
      }
    });
  });

  describe("summary", () => {
    it("keeps the best sentences by word frequency, in the text's order", async () => {
      // Mean frequency of content words: sentence 1 = 9/5, sentence 3 = 10/6, sentences 2 and 4 = 1.
      expect(await run("summary", ARTICLE, { maxSentences: 2 })).to.deep.equal({
        summary:
          "Escrow holds the reward until the work is verified. Verified work releases the escrow reward to the worker.",
        sentences: [
          "Escrow holds the reward until the work is verified.",
          "Verified work releases the escrow reward to the worker.",
        ],
        wordCount: 27,
      });
      expect(((await run("summary", ARTICLE, { maxSentences: 1 })) as { summary: string }).summary).to.equal(
        "Escrow holds the reward until the work is verified.",
      );
    });

    it("keeps 3 sentences by default, the earlier one on a tie, and answers the same every time", async () => {
      const first = await run("summary", ARTICLE);
      expect((first as { sentences: string[] }).sentences).to.deep.equal([
        "Escrow holds the reward until the work is verified.",
        "The weather was pleasant yesterday.",
        "Verified work releases the escrow reward to the worker.",
      ]);
      expect(await run("summary", ARTICLE)).to.deep.equal(first);
    });

    it("reads the `text` of a JSON brief, or the configured field", async () => {
      const brief = JSON.stringify({ text: ARTICLE, other: { body: "Only this. Nothing else." } });
      expect(((await run("summary", brief, { maxSentences: 1 })) as { sentences: string[] }).sentences).to.deep.equal([
        "Escrow holds the reward until the work is verified.",
      ]);
      expect(
        ((await run("summary", brief, { maxSentences: 5, field: "other.body" })) as { sentences: string[] }).sentences,
      ).to.deep.equal(["Only this.", "Nothing else."]);
      expect((await rejection(run("summary", brief, { field: "other.missing" }))).message).to.equal(
        "the brief has no field other.missing (config.field)",
      );
    });

    it("fails a brief without text, and refuses maxSentences outside 1..10 naming the field", async () => {
      expect((await rejection(run("summary", "   "))).message).to.equal("the brief has no text to summarise");
      expect(() => skill("summary").parseConfig({ maxSentences: 0 })).to.throw(/^config\.maxSentences: /);
      expect(() => skill("summary").parseConfig({ maxSentences: 11 })).to.throw(/^config\.maxSentences: /);
      expect(() => skill("summary").parseConfig({ maxSentences: 2.5 })).to.throw(/^config\.maxSentences: /);
      expect(() => skill("summary").parseConfig({ field: "a..b" })).to.throw(/^config\.field: .*empty segment/);
    });
  });

  describe("keywords", () => {
    it("answers the most frequent content words, ties in order of first occurrence", async () => {
      expect(await run("keywords", ARTICLE, { limit: 5 })).to.deep.equal({
        keywords: [
          { word: "escrow", count: 2 },
          { word: "reward", count: 2 },
          { word: "work", count: 2 },
          { word: "verified", count: 2 },
          { word: "holds", count: 1 },
        ],
        wordCount: 27,
      });
    });

    it("leaves out stop words, one-letter words and numbers, and counts case-insensitively", async () => {
      expect(await run("keywords", "The API and the api: a 42 API; I don't know.", { limit: 3 })).to.deep.equal({
        keywords: [
          { word: "api", count: 3 },
          { word: "know", count: 1 },
        ],
        wordCount: 11,
      });
    });

    it("refuses a limit outside 1..50 naming the field", () => {
      expect(() => skill("keywords").parseConfig({ limit: 0 })).to.throw(/^config\.limit: /);
      expect(() => skill("keywords").parseConfig({ limit: "5" })).to.throw(/^config\.limit: /);
    });
  });

  describe("text-checks", () => {
    it("counts words, characters and lines and reports the missing keywords", async () => {
      const text = "Haiku about escrow\nfunds wait for the work\n😀 paid";
      expect(await run("text-checks", text, { keywords: ["ESCROW", "paid", "refund"], maxWords: 20 })).to.deep.equal({
        wordCount: 10,
        charCount: 49,
        lines: 3,
        containsAll: false,
        missing: ["refund"],
        lengthOk: true,
        problems: ['missing "refund"'],
        passed: false,
      });
    });

    it("checks length bounds in characters and words, on a field of a JSON brief", async () => {
      const brief = JSON.stringify({ draft: { body: "one two three" } });
      expect(
        await run("text-checks", brief, { field: "draft.body", minChars: 20, maxWords: 2, keywords: ["two"] }),
      ).to.deep.equal({
        wordCount: 3,
        charCount: 13,
        lines: 1,
        containsAll: true,
        missing: [],
        lengthOk: false,
        problems: ["13 characters, at least 20 required", "3 words, at most 2 allowed"],
        passed: false,
      });
      expect(await run("text-checks", "one two three", { minWords: 3, maxChars: 13 })).to.include({
        passed: true,
        lengthOk: true,
      });
    });

    it("counts lines as wc -l does: none when empty, a final line break starts no line", () => {
      expect(checkText("", { keywords: [] }).lines).to.equal(0);
      expect(checkText("one", { keywords: [] }).lines).to.equal(1);
      expect(checkText("one\n", { keywords: [] }).lines).to.equal(1);
      expect(checkText("one\r\ntwo\rthree\n\nfive", { keywords: [] }).lines).to.equal(5);
    });

    it("refuses bad bounds and blank keywords naming the field", () => {
      expect(() => skill("text-checks").parseConfig({ minChars: 10, maxChars: 5 })).to.throw(
        "config.maxChars: must be at least minChars",
      );
      expect(() => skill("text-checks").parseConfig({ keywords: ["ok", " "] })).to.throw(
        "config.keywords[1]: must not be blank",
      );
      expect(() => skill("text-checks").parseConfig({ minWords: -1 })).to.throw(/^config\.minWords: /);
    });
  });

  describe("json", () => {
    const brief = JSON.stringify({ id: 7, user: { name: "Ada", age: 36 }, tags: ["a", "b"] });

    it("answers a valid JSON brief as is without pick or rename", async () => {
      expect(await run("json", brief)).to.deep.equal({ id: 7, user: { name: "Ada", age: 36 }, tags: ["a", "b"] });
      expect(await run("json", "[1,2,3]")).to.deep.equal([1, 2, 3]);
    });

    it("picks dotted paths, renaming some", async () => {
      expect(
        await run("json", brief, { pick: ["user.name", "id", "tags.1"], rename: { "user.name": "name" } }),
      ).to.deep.equal({
        name: "Ada",
        id: 7,
        tags: { "1": "b" },
      });
      expect(await run("json", brief, { pick: ["user.age"] })).to.deep.equal({ user: { age: 36 } });
    });

    it("renames paths of the whole object without pick", async () => {
      expect(await run("json", brief, { rename: { "user.name": "author", id: "meta.id" } })).to.deep.equal({
        author: "Ada",
        meta: { id: 7 },
        user: { age: 36 },
        tags: ["a", "b"],
      });
    });

    it("reads the JSON object inside prose", async () => {
      expect(await run("json", 'Here you go: {"a": {"b": 1}} -- thanks', { pick: ["a.b"] })).to.deep.equal({
        a: { b: 1 },
      });
    });

    it("fails a brief that is not JSON, is null, or lacks a named path, with a clear message", async () => {
      expect((await rejection(run("json", "not json at all"))).message).to.equal(
        "the brief is not valid JSON (nor text holding a JSON object)",
      );
      expect((await rejection(run("json", "null"))).message).to.equal(
        "the brief is JSON null: there is nothing to answer",
      );
      expect((await rejection(run("json", brief, { pick: ["user.email"] }))).message).to.equal(
        "the brief has no field user.email",
      );
      expect((await rejection(run("json", "[1]", { pick: ["0"] }))).message).to.equal(
        "the brief is JSON but not an object: pick and rename need one",
      );
    });

    it("refuses renames outside pick and prototype paths naming the field", () => {
      expect(() => skill("json").parseConfig({ pick: ["a"], rename: { b: "c" } })).to.throw(
        "config.rename.b: must be one of the pick paths",
      );
      expect(() => skill("json").parseConfig({ pick: ["a.__proto__.x"] })).to.throw(/^config\.pick\[0\]: .*__proto__/);
      expect(() => skill("json").parseConfig({ pick: "a" })).to.throw(/^config\.pick: /);
    });
  });

  describe("webhook", () => {
    const SECRET = "whsec_test_secret";
    let server: http.Server;
    let base: string;
    /** What the endpoint saw, per request. */
    let seen: { path: string; headers: http.IncomingHttpHeaders; body: string; signatureValid: boolean }[];

    /** Verifies X-Market-Signature as an owner would: t=<seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>. */
    const signatureValid = (header: string | undefined, body: string) => {
      const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? "");
      if (!match) return false;
      const expected = crypto.createHmac("sha256", SECRET).update(`${match[1]}.${body}`).digest();
      const fresh = Math.abs(Date.now() / 1000 - Number(match[1])) < 300;
      return fresh && crypto.timingSafeEqual(expected, Buffer.from(match[2], "hex"));
    };

    before(async () => {
      server = http.createServer((request, response) => {
        let body = "";
        request.setEncoding("utf8");
        request.on("data", (chunk: string) => (body += chunk));
        request.on("end", () => {
          const path = request.url ?? "";
          const valid = signatureValid(request.headers["x-market-signature"] as string | undefined, body);
          seen.push({ path, headers: request.headers, body, signatureValid: valid });
          const answer = (status: number, text: string) => {
            response.writeHead(status, { "content-type": "application/json" });
            response.end(text);
          };
          if (path === "/hang") return; // never answers
          if (!valid) return answer(401, JSON.stringify({ error: "bad signature" }));
          const brief = (JSON.parse(body) as { brief: string }).brief;
          if (path === "/echo") return answer(200, JSON.stringify({ result: { upper: brief.toUpperCase() } }));
          if (path === "/whole") return answer(200, JSON.stringify({ answer: 42 }));
          if (path === "/fail") return answer(500, JSON.stringify({ error: "boom" }));
          if (path === "/text") return answer(200, "this is not json");
          if (path === "/null") return answer(200, JSON.stringify({ result: null }));
          if (path === "/empty") return answer(200, "");
          if (path === "/big") return answer(200, JSON.stringify({ result: "x".repeat(WEBHOOK_MAX_ANSWER_BYTES) }));
          if (path === "/redirect") {
            response.writeHead(302, { location: "/echo" });
            return response.end();
          }
          answer(404, "{}");
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    after(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    beforeEach(() => (seen = []));

    /** Runs the webhook skill on `path` of the test endpoint, private addresses allowed as on a devnet. */
    const call = (path: string, extra: Record<string, unknown> = {}, overrides: Partial<SkillContext> = {}) => {
      const config = skill("webhook").parseConfig(
        { url: `${base}${path}`, capabilities: ["translate"], ...extra },
        { allowPrivateAddresses: true },
      );
      return skill("webhook").run(
        job("bonjour", { requiredCapabilities: ["translate"], attempt: 2 }),
        context(config, { secrets: { signingSecret: SECRET }, allowPrivateAddresses: true, ...overrides }),
      );
    };

    it("POSTs the signed job and delivers the `result` of the answer", async () => {
      expect(await call("/echo")).to.deep.equal({ upper: "BONJOUR" });
      expect(seen).to.have.length(1);
      const [request] = seen;
      expect(request.signatureValid).to.equal(true);
      expect(JSON.parse(request.body)).to.deep.equal({
        taskHash: `0x${"ab".repeat(32)}`,
        brief: "bonjour",
        requiredCapabilities: ["translate"],
        attempt: 2,
      });
      expect(request.headers["content-type"]).to.equal("application/json");
      expect(request.headers["x-market-task"]).to.equal(`0x${"ab".repeat(32)}`);
      expect(request.headers["x-market-attempt"]).to.equal("2");
    });

    it("is refused by an endpoint checking the signature when the secret is another", async () => {
      const error = await rejection(call("/echo", {}, { secrets: { signingSecret: "whsec_other" } }));
      expect(seen[0].signatureValid).to.equal(false);
      expect(error.message).to.equal("the webhook answered HTTP 401, not a 2xx with a result");
    });

    it("delivers the whole JSON answer when it has no `result`", async () => {
      expect(await call("/whole")).to.deep.equal({ answer: 42 });
    });

    it("fails on a non-2xx answer (redirects included), naming the status", async () => {
      expect((await rejection(call("/fail"))).message).to.equal(
        "the webhook answered HTTP 500, not a 2xx with a result",
      );
      expect((await rejection(call("/redirect"))).message).to.equal(
        "the webhook answered HTTP 302, not a 2xx with a result",
      );
      expect(seen.map((s) => s.path)).to.deep.equal(["/fail", "/redirect"]);
    });

    it("fails on an answer that is not JSON, empty, or a null result", async () => {
      expect((await rejection(call("/text"))).message).to.equal(
        "the webhook answered HTTP 200 with a body that is not JSON",
      );
      expect((await rejection(call("/empty"))).message).to.equal(
        "the webhook answered HTTP 200 with an empty body, not a result",
      );
      expect((await rejection(call("/null"))).message).to.equal(
        "the webhook answered HTTP 200 with a null result: there is nothing to deliver",
      );
    });

    it("fails on an answer larger than it reads", async () => {
      expect((await rejection(call("/big"))).message).to.equal(
        `the webhook answered HTTP 200 with more than ${WEBHOOK_MAX_ANSWER_BYTES} bytes`,
      );
    });

    it("gives up after timeoutMs on an endpoint that never answers", async () => {
      const started = Date.now();
      const error = await rejection(call("/hang", { timeoutMs: 200 }));
      expect(error.message).to.equal("the webhook did not answer within 200 ms (config.timeoutMs)");
      expect(Date.now() - started).to.be.within(150, 2000);
    });

    it("abandons the call when the agent stops (signal)", async () => {
      const stop = new AbortController();
      const abandoned = rejection(call("/hang", { timeoutMs: 60_000 }, { signal: stop.signal }));
      // The agent stops once the endpoint has the request, while the call waits for its answer.
      const until = Date.now() + 10_000;
      while (seen.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
      stop.abort();
      const error = await abandoned;
      expect(error.message).to.equal("the agent is stopping: the webhook call was abandoned");
      expect(seen.map((s) => s.path)).to.deep.equal(["/hang"]);
      const stopped = new AbortController();
      stopped.abort();
      expect((await rejection(call("/echo", {}, { signal: stopped.signal }))).message).to.equal(
        "the agent is stopping: the webhook was not called",
      );
    });

    it("fails clearly when the endpoint cannot be reached", async () => {
      const closed = http.createServer();
      await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const config = skill("webhook").parseConfig(
        { url: `http://127.0.0.1:${port}/`, capabilities: ["x"] },
        { allowPrivateAddresses: true },
      );
      const error = await rejection(
        skill("webhook").run(
          job("x"),
          context(config, { secrets: { signingSecret: SECRET }, allowPrivateAddresses: true }),
        ),
      );
      expect(error.message).to.match(/^the webhook could not be reached: .*ECONNREFUSED/);
    });

    it("refuses http, and loopback or private hosts, unless private addresses are allowed", async () => {
      const parse = (url: string, allowPrivateAddresses?: boolean) => () =>
        skill("webhook").parseConfig({ url, capabilities: ["x"] }, { allowPrivateAddresses });
      expect(parse(`${base}/echo`)).to.throw(
        "config.url: must be https (http only to a loopback or private host on a devnet)",
      );
      expect(parse("http://agent.example.com/run", true)).to.throw("config.url: must be https");
      const error = thrown(parse("https://127.0.0.1/run"));
      expect((error as AppError).code).to.equal("WEBHOOK_URL_NOT_PUBLIC");
      expect(error.message).to.equal(
        "config.url: 127.0.0.1 is not a public address (loopback and private are refused)",
      );
      expect(parse("https://10.1.2.3/run")).to.throw(AppError, "not a public address");
      expect(parse("https://localhost/run")).to.throw(AppError, "not a public address");
      expect(parse("ftp://agent.example.com/run", true)).to.throw("config.url: must be https, not ftp");
      expect(parse("https://user:pw@agent.example.com/run")).to.throw("config.url: must not carry a user name");
      expect(parse("https://agent.example.com/run")()).to.deep.equal({
        url: "https://agent.example.com/run",
        capabilities: ["x"],
        timeoutMs: 30_000,
      });

      // A stored config run by a host that does not allow private addresses: refused before any request.
      const config = skill("webhook").parseConfig(
        { url: `${base}/echo`, capabilities: ["x"] },
        { allowPrivateAddresses: true },
      );
      const refused = await rejection(
        skill("webhook").run(job("x"), context(config, { secrets: { signingSecret: SECRET } })),
      );
      expect(refused.message).to.match(/^config\.url: must be https/);
      expect(seen).to.deep.equal([]);
    });

    it("validates capabilities, timeoutMs and the secret, naming the field", async () => {
      const parse = (extra: Record<string, unknown>) => () =>
        skill("webhook").parseConfig({ url: "https://agent.example.com/run", capabilities: ["x"], ...extra });
      expect(parse({ capabilities: [] })).to.throw("config.capabilities: must list at least one capability");
      expect(parse({ capabilities: Array.from({ length: 21 }, (_, i) => `c${i}`) })).to.throw(
        "config.capabilities: at most 20 capabilities",
      );
      expect(parse({ capabilities: ["a,b"] })).to.throw("config.capabilities[0]: must not contain a comma");
      expect(parse({ timeoutMs: 120_001 })).to.throw(/^config\.timeoutMs: /);
      expect(parse({ timeoutMs: 50 })).to.throw(/^config\.timeoutMs: /);
      expect(() => skill("webhook").parseConfig({ capabilities: ["x"] })).to.throw(/^config\.url: /);
      const config = skill("webhook").parseConfig(
        { url: `${base}/echo`, capabilities: ["x"] },
        { allowPrivateAddresses: true },
      );
      const error = await rejection(skill("webhook").run(job("x"), context(config, { allowPrivateAddresses: true })));
      expect(error.message).to.equal("the webhook skill has no signingSecret: reinstall it with one");
      expect(seen).to.deep.equal([]);
    });
  });

  describe("verifier", () => {
    const criteria = { min_length: 10, contains_keywords: ["escrow"], required_fields: ["summary"] };

    it("passes work meeting every rule, in the verify route's body shape", async () => {
      const verdict = await judgeWork(criteria, { summary: "escrow pays on delivery" });
      expect(verdict).to.deep.equal({ passed: true, reason: "all rules hold" });
      expect(verifyBodySchema.parse(verdict)).to.deep.equal(verdict);
    });

    it("fails work, saying which rules fail and why", async () => {
      expect(await judgeWork(criteria, "escrow")).to.deep.equal({
        passed: false,
        reason: "min_length: 6 characters, at least 10 required; required_fields: the result is not a JSON object",
      });
      expect(await judgeWork({ regex_pattern: "^\\d{3}$" }, "12a")).to.deep.equal({
        passed: false,
        reason: "regex_pattern: the pattern does not match",
      });
      expect(await judgeWork({}, "anything")).to.deep.equal({ passed: false, reason: "no rule to evaluate" });
      expect(await judgeWork(null, "anything")).to.deep.equal({
        passed: false,
        reason: "the task gives no criteria to judge the work by",
      });
    });

    it("judges a { criteria, result } brief as a skill", async () => {
      const brief = (result: unknown) => JSON.stringify({ criteria: { contains_keywords: ["Paid", "done"] }, result });
      expect(await run("verifier", brief("paid and DONE"))).to.deep.equal({ passed: true, reason: "all rules hold" });
      expect(await run("verifier", brief({ note: "paid" }))).to.deep.equal({
        passed: false,
        reason: 'contains_keywords: missing "done"',
      });
      expect((await rejection(run("verifier", "no json"))).message).to.equal(
        "the brief must be a JSON object { criteria, result } for the verifier",
      );
      expect(
        (await rejection(run("verifier", JSON.stringify({ criteria: { min_length: -1 }, result: "x" })))).message,
      ).to.match(/^brief\.criteria\.min_length: /);
      expect((await rejection(run("verifier", JSON.stringify({ criteria: {}, result: null })))).message).to.equal(
        "brief.result: must be the delivered result, not null",
      );
    });
  });
});
