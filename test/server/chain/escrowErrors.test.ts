import { expect } from "chai";
import { artifacts } from "hardhat";
import { ESCROW_ERROR_CODES, escrowErrorCode, escrowRefusal } from "../../../server/chain/escrowErrors";
import { ERROR_STATUS } from "../../../server/errors";

describe("server/chain/escrowErrors.ts", () => {
  it("maps every error of the escrow's ABI (and Error(string)) to a stable API code", async () => {
    const abi = (await artifacts.readArtifact("TaskEscrow")).abi as { type: string; name: string }[];
    const names = abi.filter((e) => e.type === "error").map((e) => e.name);
    expect(names.length).to.be.greaterThan(40);
    const missing = [...names, "Error"].filter((name) => escrowErrorCode(name) === undefined);
    expect(missing, "escrow errors without an API code").to.deep.equal([]);
    // Nothing mapped that the escrow does not have (a renamed error would leave a stale entry).
    const stale = Object.keys(ESCROW_ERROR_CODES).filter((name) => name !== "Error" && !names.includes(name));
    expect(stale).to.deep.equal([]);
    for (const code of Object.values(ESCROW_ERROR_CODES)) expect(ERROR_STATUS).to.have.property(code);
  });

  it("answers a refusal's reason and escrow code, and nothing for no reason", () => {
    expect(escrowRefusal("EnforcedPause")).to.deep.equal({
      reason: "EnforcedPause",
      details: { escrowCode: "ESCROW_PAUSED" },
    });
    expect(escrowRefusal("Unheard")).to.deep.equal({ reason: "Unheard", details: { escrowCode: "TX_REVERTED" } });
    expect(escrowRefusal(undefined)).to.deep.equal({});
    expect(escrowErrorCode("toString")).to.equal(undefined);
  });
});
