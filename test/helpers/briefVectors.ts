/**
 * The fixed test vectors of the brief crypto (client/sdk/briefCrypto.ts), shared by the service's tests and the
 * SDK's: one implementation, one set of vectors. Changing the format breaks these on purpose.
 */
export const AGENT_PRIVATE = "0x" + "11".repeat(32);
export const BRIEF_KEY = Buffer.from("22".repeat(32), "hex");
export const BRIEF_IV = Buffer.from("33".repeat(12), "hex");
export const EPHEMERAL = Buffer.from("44".repeat(32), "hex");
export const WRAP_IV = Buffer.from("55".repeat(12), "hex");
export const PLAINTEXT = Buffer.from('{"task":"Translate to French","text":"Hello"}', "utf8");

// Pinned outputs of the documented layouts for the inputs above. Changing the format breaks these on purpose.
export const VECTOR_BRIEF_BLOB =
  "425246313333333333333333333333330de1b28b064754522ab9e9117ba261f351c44bf337902f836fb94b9ebca32009ee90db75cb199c" +
  "e12bc15ad0aa6aa6e53076e3e93a667325ceb00e4feb";
export const VECTOR_AGENT_PUBLIC =
  "044f355bdcb7cc0af728ef3cceb9615d90684bb5b2ca5f859ab0f0b704075871aa385b6b1b8ead809ca67454d9683fcf2ba03456d6fe2c4ab" +
  "e2b07f0fbdbb2f1c1";
export const VECTOR_WRAPPED =
  "01042c0b7cf95324a07d05398b240174dc0c2be444d96b159aa6c7f7b1e668680991ae31a9c671a36543f46cea8fce6984608aa316aa0472a" +
  "7eed08847440218cb2f55555555555555555555555591749fcbd045db31f66d05b8ec712619dabbe86e181813a0d88989aae135b1fafd74087" +
  "7c46416134ab3e1bac3011ae8";
