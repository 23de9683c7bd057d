/**
 * Brief crypto of the service: the one implementation lives in the SDK (client/sdk/briefCrypto.ts, pure @noble code
 * with no server dependency), so the service and every client encrypt, wrap, unwrap and decrypt the same bytes and
 * share the fixed test vectors (test/helpers/briefVectors.ts). The layouts are documented there.
 */
export * from "../../client/sdk/briefCrypto";
