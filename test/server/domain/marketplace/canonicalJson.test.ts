/**
 * Canonical JSON (RFC 8785) and the evidence hash, against the RFC's own examples, pinned vectors, an independent
 * keccak-256 (@noble/hashes) and properties over generated JSON.
 */
import { expect } from "chai";
import fc from "fast-check";
import { keccak_256 } from "@noble/hashes/sha3";
import {
  CanonicalJsonError,
  MAX_DEPTH,
  canonicalJson,
  evidenceHash,
  hashCanonical,
} from "../../../../server/domain/marketplace/canonicalJson";

const nobleKeccak = (text: string) => `0x${Buffer.from(keccak_256(Buffer.from(text, "utf8"))).toString("hex")}`;

// RFC 8785 section 3.2.2/3.2.4: the sample input and its canonical form.
const RFC_INPUT = String.raw`{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`;
const RFC_CANONICAL = String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`;

// RFC 8785 section 3.2.3: property sorting by UTF-16 code units.
const RFC_SORT_INPUT = String.raw`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`;
const RFC_SORT_ORDER = ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"];

// Pinned evidence hashes: changing the canonical form or the hash breaks these on purpose.
const VECTORS: [unknown, string, string][] = [
  [{ result: "done" }, '{"result":"done"}', "0x1f812f6a224a938b30ea0a039cde507972443aff6cd278b5a2591559f37d6ed7"],
  ["hello", '"hello"', "0xf6fb31fdcaf3bd3f8350b3591a8d548dd83b099e7a76446b1fdda2f5ebdd1232"],
  [42, "42", "0xccb1f717aa77602faf03a594761a36956b1c4cf44c6b336d1db57da799b331b8"],
  [null, "null", "0xefbde2c3aee204a69b7696d4b10ff31137fe78e3946306284f806e2dfc68b805"],
  [{}, "{}", "0xb48d38f93eaa084033fc5970bf96e559c33c4cdc07d889ab00b4d63f9590739d"],
  [[], "[]", "0x518674ab2b227e5f11e9084f615d57663cde47bce1ba168b4c19c7ee22a73d70"],
  [JSON.parse(RFC_INPUT), RFC_CANONICAL, "0x95fb19ff3efb4a4ce1ee009fc6b7f4cce4b5839e069b096f296fc9bffbbd0162"],
  [
    JSON.parse(RFC_SORT_INPUT),
    `{${RFC_SORT_ORDER.map((k) => `${JSON.stringify(k)}:${JSON.stringify(JSON.parse(RFC_SORT_INPUT)[k])}`).join(",")}}`,
    "0xa0a138a7404c34122e9e872cd2a11429272c1ad2a592c0c8c47cf059164bb78f",
  ],
];

describe("canonical JSON and the evidence hash", () => {
  it("produces RFC 8785's canonical form of its sample", () => {
    expect(canonicalJson(JSON.parse(RFC_INPUT))).to.equal(RFC_CANONICAL);
  });

  it("sorts property names by UTF-16 code units, as RFC 8785's example", () => {
    // Read the order from the text: JavaScript enumerates integer-like keys ("1") first, whatever the text says.
    const text = canonicalJson(JSON.parse(RFC_SORT_INPUT));
    const positions = RFC_SORT_ORDER.map((k) => text.indexOf(`${JSON.stringify(k)}:`));
    expect(positions.every((p) => p > 0)).to.equal(true);
    expect([...positions].sort((a, b) => a - b)).to.deep.equal(positions);
  });

  it("matches the pinned vectors, and an independent keccak-256 of the UTF-8 bytes", () => {
    for (const [value, canonical, hash] of VECTORS) {
      expect(canonicalJson(value)).to.equal(canonical);
      expect(evidenceHash(value)).to.equal(hash);
      expect(hashCanonical(canonical)).to.equal(hash);
      expect(nobleKeccak(canonical)).to.equal(hash);
    }
  });

  it("writes numbers in ECMAScript's shortest form and -0 as 0", () => {
    expect(canonicalJson([-0, 1e21, 1e-7, 0.1 + 0.2, 100, 4.5, -1.5e-10])).to.equal(
      "[0,1e+21,1e-7,0.30000000000000004,100,4.5,-1.5e-10]",
    );
  });

  it("escapes only quotes, backslashes and control characters, with lower-case hex", () => {
    expect(canonicalJson('a"b\\c\u0001\u001f\b\t\n\f\r/\u2028é😀')).to.equal(
      '"a\\"b\\\\c\\u0001\\u001f\\b\\t\\n\\f\\r/\u2028é😀"',
    );
  });

  it("sorts nested objects and keeps array order", () => {
    expect(canonicalJson({ b: { d: 1, c: [3, { z: 0, y: 1 }] }, a: true })).to.equal(
      '{"a":true,"b":{"c":[3,{"y":1,"z":0}],"d":1}}',
    );
  });

  it("refuses what has no canonical form, naming the path", () => {
    const refusals: [unknown, RegExp][] = [
      [{ a: [1, Infinity] }, /^result\.a\[1\]: is not a finite number/],
      [JSON.parse('{"big":1e400}'), /^result\.big: is not a finite number/],
      [{ s: "x\ud800y" }, /^result\.s: contains a lone UTF-16 surrogate/],
      [JSON.parse('{"\\udc00":1}'), /lone UTF-16 surrogate/],
      [{ u: undefined }, /^result\.u: is not a JSON value \(undefined\)/],
      [{ d: new Date(0) }, /^result\.d: is not a plain JSON object/],
      [{ n: 10n }, /is not a JSON value \(bigint\)/],
    ];
    for (const [value, message] of refusals) {
      expect(() => canonicalJson(value)).to.throw(CanonicalJsonError, message);
    }
  });

  it(`accepts nesting up to ${MAX_DEPTH} levels and refuses deeper`, () => {
    const nest = (levels: number) => JSON.parse("[".repeat(levels) + "]".repeat(levels));
    expect(canonicalJson(nest(MAX_DEPTH))).to.equal("[".repeat(MAX_DEPTH) + "]".repeat(MAX_DEPTH));
    expect(() => canonicalJson(nest(MAX_DEPTH + 1))).to.throw(CanonicalJsonError, /nests deeper than 64 levels/);
    // A hostile depth is refused, not a stack overflow.
    expect(() => canonicalJson(nest(100_000))).to.throw(CanonicalJsonError);
  });

  it("keeps a __proto__ key as data", () => {
    const value = JSON.parse('{"__proto__":{"x":1},"a":2}');
    expect(canonicalJson(value)).to.equal('{"__proto__":{"x":1},"a":2}');
  });

  it("is a fixed point, independent of key order and whitespace (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const canonical = canonicalJson(value);
        expect(canonicalJson(JSON.parse(canonical))).to.equal(canonical);
        expect(canonicalJson(JSON.parse(JSON.stringify(value, null, 2)))).to.equal(canonical);
        const reversed = JSON.parse(JSON.stringify(value), (_k, v) =>
          v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
        );
        expect(evidenceHash(reversed)).to.equal(evidenceHash(value));
      }),
      { numRuns: 300 },
    );
  });
});
