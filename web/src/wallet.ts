/**
 * Wallets: any EIP-1193 provider. Browser wallets are discovered with EIP-6963 (each announces itself with a name and
 * icon), with the legacy injected `window.ethereum` as a fallback; on the devnet a "devnet wallet" signs with a demo
 * account's key in the page (the server offers the keys only when it runs as the devnet).
 */
import {
  BrowserProvider,
  JsonRpcProvider,
  Wallet,
  getBytes,
  isHexString,
  toQuantity,
  toUtf8Bytes,
  type JsonRpcSigner,
} from "ethers";

export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] | object }): Promise<unknown>;
}

export interface WalletChoice {
  id: string;
  name: string;
  icon?: string;
  provider: Eip1193Provider;
}

interface AnnounceDetail {
  info: { uuid: string; name: string; icon: string; rdns: string };
  provider: Eip1193Provider;
}

/** Browser wallets present now (EIP-6963 announcements, else window.ethereum); `onChange` hears late ones. */
export function discoverWallets(onChange: (wallets: WalletChoice[]) => void): () => void {
  const found = new Map<string, WalletChoice>();
  const publish = () => {
    const list = [...found.values()];
    const injected = (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
    if (list.length === 0 && injected) list.push({ id: "injected", name: "Browser wallet", provider: injected });
    onChange(list);
  };
  const onAnnounce = (event: Event) => {
    const detail = (event as CustomEvent<AnnounceDetail>).detail;
    if (!detail?.info?.uuid || !detail.provider) return;
    found.set(detail.info.uuid, {
      id: detail.info.rdns || detail.info.uuid,
      name: detail.info.name,
      icon: detail.info.icon,
      provider: detail.provider,
    });
    publish();
  };
  window.addEventListener("eip6963:announceProvider", onAnnounce);
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  publish();
  return () => window.removeEventListener("eip6963:announceProvider", onAnnounce);
}

/** A chain the devnet wallet can sign on: its id and JSON-RPC URL. */
export interface DevnetChain {
  chainId: number;
  rpcUrl: string;
}

/**
 * An EIP-1193 provider over a devnet demo key: accounts, personal_sign and eth_sendTransaction are answered in the
 * page with the key; every other call goes to the current chain's JSON-RPC. It starts on the first of `chains` and
 * moves to another with wallet_switchEthereumChain, as a browser wallet does (an unknown chain: error 4902).
 */
export function devnetProvider(privateKey: string, chains: readonly DevnetChain[]): Eip1193Provider {
  const signers = new Map(
    chains.map(({ chainId, rpcUrl }) => {
      // No response cache: a transaction right after another must read the new nonce.
      const rpc = new JsonRpcProvider(rpcUrl, chainId, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
      return [chainId, { rpc, wallet: new Wallet(privateKey, rpc) }] as const;
    }),
  );
  let chainId = chains[0].chainId;
  const current = () => signers.get(chainId)!;
  return {
    async request({ method, params }) {
      const args = (Array.isArray(params) ? params : []) as unknown[];
      const { rpc, wallet } = current();
      switch (method) {
        case "eth_requestAccounts":
        case "eth_accounts":
          return [wallet.address];
        case "eth_chainId":
          return toQuantity(chainId);
        case "wallet_switchEthereumChain": {
          const wanted = Number((args[0] as { chainId: string }).chainId);
          if (!signers.has(wanted)) {
            throw Object.assign(new Error(`the devnet wallet has no chain ${wanted}`), { code: 4902 });
          }
          chainId = wanted;
          return null;
        }
        case "personal_sign": {
          const data = String(args[0]);
          return wallet.signMessage(isHexString(data) ? getBytes(data) : toUtf8Bytes(data));
        }
        case "eth_sendTransaction": {
          const tx = args[0] as { to: string; data?: string; value?: string };
          const sent = await wallet.sendTransaction({ to: tx.to, data: tx.data, value: tx.value ?? 0n });
          return sent.hash;
        }
        default:
          return rpc.send(method, args);
      }
    },
  };
}

/**
 * A signer of `wallet` on chain `chainId` (a task's chain): the wallet is asked to switch first when it is elsewhere.
 * A refusal leaves it where it is, and the SDK's chain check then refuses before anything is signed (WRONG_CHAIN).
 */
export async function signerOnChain(wallet: Eip1193Provider, chainId: number | null): Promise<JsonRpcSigner> {
  if (chainId !== null) {
    const current = Number(BigInt((await wallet.request({ method: "eth_chainId" })) as string));
    if (current !== chainId) {
      await wallet
        .request({ method: "wallet_switchEthereumChain", params: [{ chainId: toQuantity(chainId) }] })
        .catch(() => undefined);
    }
  }
  return new BrowserProvider(wallet).getSigner();
}
