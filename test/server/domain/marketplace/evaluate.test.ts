/**
 * The auto rules (docs/marketplace.md, "Deliverables and verification"), and the bound on regex evaluation: a
 * runaway pattern is stopped by terminating its worker thread while the event loop stays free.
 */
import { expect } from "chai";
import {
  evaluateCriteria,
  evaluationReason,
  MAX_EVAL_CHARS,
  MAX_REASON_LENGTH,
  resultText,
  testRegexBounded,
} from "../../../../server/domain/marketplace/evaluate";
import { judgeWork } from "../../../../server/hosting/skills/verifier";
import { verifyBodySchema } from "../../../../server/domain/schemas/delivery";

const rule = (e: Awaited<ReturnType<typeof evaluateCriteria>>, name: string) => e.checks.find((c) => c.rule === name);

describe("auto verification rules", () => {
  describe("the result text", () => {
    it("is a string result as is, anything else its canonical JSON", () => {
      expect(resultText("plain text")).to.equal("plain text");
      expect(resultText({ b: 1, a: "x" })).to.equal('{"a":"x","b":1}');
      expect(resultText(["x", 2])).to.equal('["x",2]');
      expect(resultText(12.5)).to.equal("12.5");
    });
  });

  describe("min_length", () => {
    it("counts characters (code points) of the text", async () => {
      expect((await evaluateCriteria({ min_length: 5 }, "hello")).passed).to.equal(true);
      expect((await evaluateCriteria({ min_length: 6 }, "hello")).passed).to.equal(false);
      // Four emoji are eight UTF-16 units but four characters.
      expect((await evaluateCriteria({ min_length: 4 }, "😀😀😀😀")).passed).to.equal(true);
      expect((await evaluateCriteria({ min_length: 5 }, "😀😀😀😀")).passed).to.equal(false);
    });

    it("measures a non-string result as canonical JSON", async () => {
      // {"a":1} is 7 characters.
      expect((await evaluateCriteria({ min_length: 7 }, { a: 1 })).passed).to.equal(true);
      expect((await evaluateCriteria({ min_length: 8 }, { a: 1 })).passed).to.equal(false);
    });
  });

  describe("contains_keywords", () => {
    it("needs every keyword, case-insensitively", async () => {
      const criteria = { contains_keywords: ["Escrow", "HAIKU"] };
      expect((await evaluateCriteria(criteria, "a haiku about escrow")).passed).to.equal(true);
      const e = await evaluateCriteria(criteria, "a poem about escrow");
      expect(e.passed).to.equal(false);
      expect(rule(e, "contains_keywords")!.detail).to.equal('missing "HAIKU"');
    });

    it("searches a structured result's canonical JSON, and skips blank keywords", async () => {
      expect((await evaluateCriteria({ contains_keywords: ["answer", " "] }, { answer: 42 })).passed).to.equal(true);
    });
  });

  describe("required_fields", () => {
    it("needs every top-level key of an object result (any value, null included)", async () => {
      const criteria = { required_fields: ["title", "body"] };
      expect((await evaluateCriteria(criteria, { title: "t", body: null })).passed).to.equal(true);
      const e = await evaluateCriteria(criteria, { title: "t", nested: { body: 1 } });
      expect(e.passed).to.equal(false);
      expect(rule(e, "required_fields")!.detail).to.equal('missing "body"');
    });

    it("fails a result that is not an object", async () => {
      for (const result of ["title body", ["title", "body"], null, 3]) {
        const e = await evaluateCriteria({ required_fields: ["title"] }, result);
        expect(e.passed).to.equal(false);
        expect(rule(e, "required_fields")!.detail).to.equal("the result is not a JSON object");
      }
    });
  });

  describe("regex_pattern", () => {
    it("matches anywhere in the text, with the task's flags", async () => {
      expect((await evaluateCriteria({ regex_pattern: "^\\d{3}-\\d{4}$" }, "555-1234")).passed).to.equal(true);
      expect((await evaluateCriteria({ regex_pattern: "^\\d{3}-\\d{4}$" }, "call 555-1234")).passed).to.equal(false);
      expect((await evaluateCriteria({ regex_pattern: "done" }, "all DONE")).passed).to.equal(false);
      expect((await evaluateCriteria({ regex_pattern: "done", regex_flags: "i" }, "all DONE")).passed).to.equal(true);
      expect((await evaluateCriteria({ regex_pattern: '"ok":true' }, { ok: true })).passed).to.equal(true);
    });

    it("stops a runaway match at the time bound and fails the rule, leaving the event loop free", async () => {
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      const started = Date.now();
      try {
        // Catastrophic backtracking (refused at build time; here it proves the bound holds regardless).
        const outcome = await testRegexBounded("^(a+)+$", "", `${"a".repeat(40)}!`, { regexTimeoutMs: 300 });
        expect(outcome.kind).to.equal("timeout");
      } finally {
        clearInterval(ticker);
      }
      const elapsed = Date.now() - started;
      expect(elapsed).to.be.below(3000);
      expect(ticks).to.be.above(5);
    });

    it("fails an over-long text without running the pattern", async () => {
      const e = await evaluateCriteria({ regex_pattern: "a" }, "a".repeat(101), { maxEvalChars: 100 });
      expect(e.passed).to.equal(false);
      expect(rule(e, "regex_pattern")!.detail).to.equal("the text is longer than 100 characters");
      expect(MAX_EVAL_CHARS).to.equal(512 * 1024);
    });

    it("fails a pattern that does not compile", async () => {
      const outcome = await testRegexBounded("(", "", "x");
      expect(outcome.kind).to.equal("error");
      const e = await evaluateCriteria({ regex_pattern: "(" }, "x");
      expect(e.passed).to.equal(false);
      expect(rule(e, "regex_pattern")!.detail).to.match(/^the pattern could not be evaluated: /);
    });
  });

  describe("all rules together", () => {
    const criteria = {
      min_length: 10,
      contains_keywords: ["escrow"],
      required_fields: ["poem"],
      regex_pattern: "haiku",
    };

    it("passes only when every rule holds", async () => {
      const good = await evaluateCriteria(criteria, { poem: "a haiku on escrow" });
      expect(good.passed).to.equal(true);
      expect(good.checks.map((c) => c.rule)).to.deep.equal([
        "min_length",
        "contains_keywords",
        "required_fields",
        "regex_pattern",
      ]);
      expect(evaluationReason(good)).to.equal("all rules hold");
    });

    it("reports every failed rule in the reason", async () => {
      const bad = await evaluateCriteria(criteria, { verse: "a sonnet" });
      expect(bad.passed).to.equal(false);
      expect(evaluationReason(bad)).to.equal(
        'contains_keywords: missing "escrow"; required_fields: missing "poem"; regex_pattern: the pattern does not match',
      );
    });

    it("cuts a long reason to MAX_REASON_LENGTH characters, for the auto verifier and judgeWork alike", async () => {
      const keywords = Array.from({ length: 100 }, (_, i) => `missing-keyword-number-${i}-${"x".repeat(20)}`);
      const bad = await evaluateCriteria({ contains_keywords: keywords }, "none of them");
      const full = bad.checks.map((c) => `${c.rule}: ${c.detail}`).join("; ");
      expect(full.length).to.be.greaterThan(MAX_REASON_LENGTH);
      const reason = evaluationReason(bad);
      expect(reason).to.have.length(MAX_REASON_LENGTH);
      expect(reason).to.equal(`${full.slice(0, MAX_REASON_LENGTH - 1)}…`);
      const verdict = await judgeWork({ contains_keywords: keywords }, "none of them");
      expect(verdict.reason).to.equal(reason);
      // What a hosted verifier agent sends as is to the verify route.
      expect(verifyBodySchema.safeParse(verdict).success).to.equal(true);
    });

    it("fails criteria without any rule", async () => {
      const none = await evaluateCriteria({ contains_keywords: [" "] }, "anything");
      expect(none.passed).to.equal(false);
      expect(evaluationReason(none)).to.equal("no rule to evaluate");
    });
  });
});
