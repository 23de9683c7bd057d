/**
 * Canonical JSON (RFC 8785) of a deliverable and its evidence hash. The one implementation lives in the SDK
 * (client/sdk/canonicalJson.ts, ethers only), so a worker's client computes the same evidence hash the service
 * stores and checks before it signs submitEvidence.
 */
export * from "../../../client/sdk/canonicalJson";
