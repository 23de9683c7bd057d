/**
 * Brief crypto against fixed vectors, and against independent implementations (node:crypto for AES-GCM and HKDF,
 * ethers for ECDH), so the documented layout is what the code does.
 */
import crypto from "node:crypto";
import { expect } from "chai";
import { SigningKey } from "ethers";
import {
  agentPublicKey,
  BriefCryptoError,
  decryptBrief,
  encryptBrief,
  isValidAgentPublicKey,
  unwrapBriefKey,
  WRAPPED_KEY_BYTES,
  wrapBriefKey,
} from "../../../server/domain/briefs";
import {
  AGENT_PRIVATE,
  BRIEF_KEY,
  BRIEF_IV,
  EPHEMERAL,
  WRAP_IV,
  PLAINTEXT,
  VECTOR_BRIEF_BLOB,
  VECTOR_AGENT_PUBLIC,
  VECTOR_WRAPPED,
} from "../../helpers/briefVectors";

describe("briefs: AES-256-GCM briefs and ECIES-wrapped keys", () => {
  it("encrypts a brief into magic | iv | ciphertext | tag that node:crypto decrypts", () => {
    const { blob, key } = encryptBrief(PLAINTEXT, { key: BRIEF_KEY, iv: BRIEF_IV });
    expect(blob.toString("hex")).to.equal(VECTOR_BRIEF_BLOB);
    expect(blob.length).to.equal(4 + 12 + PLAINTEXT.length + 16);
    const decipher = crypto.createDecipheriv("aes-256-gcm", key, blob.subarray(4, 16));
    decipher.setAAD(Buffer.from("BRF1"));
    decipher.setAuthTag(blob.subarray(blob.length - 16));
    const clear = Buffer.concat([decipher.update(blob.subarray(16, blob.length - 16)), decipher.final()]);
    expect(clear.equals(PLAINTEXT)).to.equal(true);
    expect(decryptBrief(blob, key).equals(PLAINTEXT)).to.equal(true);
  });

  it("uses a fresh key and IV per brief", () => {
    const a = encryptBrief(PLAINTEXT);
    const b = encryptBrief(PLAINTEXT);
    expect(a.key.equals(b.key)).to.equal(false);
    expect(a.blob.equals(b.blob)).to.equal(false);
  });

  it("refuses a tampered brief and a wrong key", () => {
    const { blob, key } = encryptBrief(PLAINTEXT);
    const tampered = Buffer.from(blob);
    tampered[20] ^= 1;
    expect(() => decryptBrief(tampered, key)).to.throw(BriefCryptoError);
    expect(() => decryptBrief(blob, crypto.randomBytes(32))).to.throw(BriefCryptoError);
    expect(() => decryptBrief(Buffer.from("nope"), key)).to.throw(/magic/);
  });

  it("wraps the brief key to the documented 126-byte layout, checked with ethers ECDH and node HKDF/AES-GCM", () => {
    const agentPublic = agentPublicKey(AGENT_PRIVATE);
    expect(agentPublic).to.equal(VECTOR_AGENT_PUBLIC);
    const wrapped = Buffer.from(
      wrapBriefKey(BRIEF_KEY, agentPublic, { ephemeralPrivateKey: EPHEMERAL, iv: WRAP_IV }),
      "hex",
    );
    expect(wrapped.length).to.equal(WRAPPED_KEY_BYTES);
    expect(wrapped.toString("hex")).to.equal(VECTOR_WRAPPED);
    const ephemeralPublic = wrapped.subarray(1, 66);
    expect("0x" + ephemeralPublic.toString("hex")).to.equal(new SigningKey("0x" + EPHEMERAL.toString("hex")).publicKey);
    expect(wrapped.subarray(66, 78).equals(WRAP_IV)).to.equal(true);

    // Independent recomputation: ECDH with ethers, HKDF and AES-GCM with node:crypto.
    const sharedPoint = new SigningKey(AGENT_PRIVATE).computeSharedSecret("0x" + ephemeralPublic.toString("hex"));
    const shared = Buffer.from(sharedPoint.slice(4, 68), "hex"); // x coordinate of the uncompressed point
    const wrapKey = Buffer.from(crypto.hkdfSync("sha256", shared, ephemeralPublic, "escrow-market/brief-key/v1", 32));
    const decipher = crypto.createDecipheriv("aes-256-gcm", wrapKey, WRAP_IV);
    decipher.setAAD(wrapped.subarray(0, 66));
    decipher.setAuthTag(wrapped.subarray(110));
    const briefKey = Buffer.concat([decipher.update(wrapped.subarray(78, 110)), decipher.final()]);
    expect(briefKey.equals(BRIEF_KEY)).to.equal(true);
  });

  it("round-trips: only the agent's private key unwraps, and the brief then decrypts", () => {
    const { blob, key } = encryptBrief(PLAINTEXT);
    const agent = crypto.randomBytes(32);
    const other = crypto.randomBytes(32);
    const wrapped = wrapBriefKey(key, agentPublicKey(agent));
    expect(decryptBrief(blob, unwrapBriefKey(wrapped, agent)).equals(PLAINTEXT)).to.equal(true);
    expect(() => unwrapBriefKey(wrapped, other)).to.throw(BriefCryptoError);
    expect(() => unwrapBriefKey(wrapped.slice(0, -2), agent)).to.throw(/126 bytes/);
  });

  it("accepts only uncompressed secp256k1 points on the curve as agent keys", () => {
    const valid = agentPublicKey(AGENT_PRIVATE);
    expect(isValidAgentPublicKey(valid)).to.equal(true);
    expect(isValidAgentPublicKey("0x" + valid)).to.equal(false);
    expect(isValidAgentPublicKey(valid.slice(0, 128))).to.equal(false);
    const offCurve = "04" + "01".repeat(64);
    expect(isValidAgentPublicKey(offCurve)).to.equal(false);
    expect(() => wrapBriefKey(BRIEF_KEY, offCurve)).to.throw(/uncompressed secp256k1/);
  });
});
