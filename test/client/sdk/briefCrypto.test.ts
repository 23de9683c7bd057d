/**
 * The SDK's brief crypto: the fixed vectors the service's tests pin (one implementation, one set of vectors), the
 * service importing this very module, and a round trip as poster and agents use it: seal to several agents and to
 * custody, each opens it with its own key only.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import * as service from "../../../server/domain/briefs";
import {
  agentPublicKey,
  BriefCryptoError,
  decryptBrief,
  encryptBrief,
  openBrief,
  sealBrief,
  unwrapBriefKey,
  wrapBriefKey,
} from "../../../client/sdk/index";
import {
  AGENT_PRIVATE,
  BRIEF_IV,
  BRIEF_KEY,
  EPHEMERAL,
  PLAINTEXT,
  VECTOR_AGENT_PUBLIC,
  VECTOR_BRIEF_BLOB,
  VECTOR_WRAPPED,
  WRAP_IV,
} from "../../helpers/briefVectors";

describe("SDK brief crypto", () => {
  it("reproduces the service's fixed vectors", () => {
    expect(agentPublicKey(AGENT_PRIVATE)).to.equal(VECTOR_AGENT_PUBLIC);
    const { blob } = encryptBrief(PLAINTEXT, { key: BRIEF_KEY, iv: BRIEF_IV });
    expect(blob.toString("hex")).to.equal(VECTOR_BRIEF_BLOB);
    expect(wrapBriefKey(BRIEF_KEY, VECTOR_AGENT_PUBLIC, { ephemeralPrivateKey: EPHEMERAL, iv: WRAP_IV })).to.equal(
      VECTOR_WRAPPED,
    );
    expect(unwrapBriefKey(VECTOR_WRAPPED, AGENT_PRIVATE)).to.deep.equal(BRIEF_KEY);
    expect(decryptBrief(Buffer.from(VECTOR_BRIEF_BLOB, "hex"), BRIEF_KEY)).to.deep.equal(PLAINTEXT);
  });

  it("is the implementation the service uses (server/domain/briefs re-exports it)", () => {
    expect(service.wrapBriefKey).to.equal(wrapBriefKey);
    expect(service.unwrapBriefKey).to.equal(unwrapBriefKey);
    expect(service.encryptBrief).to.equal(encryptBrief);
    expect(service.decryptBrief).to.equal(decryptBrief);
  });

  it("seals a brief to each agent and to custody; each opens it with its own key, nobody else", () => {
    const agents = [Wallet.createRandom(), Wallet.createRandom()];
    const custody = Wallet.createRandom();
    const outsider = Wallet.createRandom();
    const brief = Buffer.from("Audit the escrow's pause accounting.", "utf8");
    const sealed = sealBrief(
      brief,
      agents.map((a) => ({ address: a.address, publicKey: agentPublicKey(a.privateKey) })),
      { custodyPublicKey: agentPublicKey(custody.privateKey) },
    );
    expect(Object.keys(sealed.wrappedKeys)).to.deep.equal(agents.map((a) => a.address.toLowerCase()));
    for (const a of agents) {
      expect(openBrief(sealed.blob, sealed.wrappedKeys[a.address.toLowerCase()], a.privateKey)).to.deep.equal(brief);
    }
    expect(openBrief(sealed.blob, sealed.custodyWrappedKey!, custody.privateKey)).to.deep.equal(brief);
    expect(decryptBrief(sealed.blob, sealed.key)).to.deep.equal(brief);
    const first = sealed.wrappedKeys[agents[0].address.toLowerCase()];
    expect(() => openBrief(sealed.blob, first, outsider.privateKey)).to.throw(BriefCryptoError);
    expect(() => openBrief(sealed.blob, first, agents[1].privateKey)).to.throw(BriefCryptoError);
    // A fresh key and IV per brief: the same text seals to another blob.
    expect(sealBrief(brief, []).blob.equals(sealed.blob)).to.equal(false);
  });
});
