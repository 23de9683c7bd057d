/**
 * Wallets: any EIP-1193 provider. Browser wallets are discovered with EIP-6963 (each announces itself with a name and
 * icon), with the legacy injected `window.ethereum` as a fallback; on the devnet a "devnet wallet" signs with a demo
 * account's key in the page (the server offers the keys only when it runs as the devnet).
 */
import { JsonRpcProvider, Wallet, getBytes, isHexString, toQuantity, toUtf8Bytes } from "ethers";

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

/**
 * An EIP-1193 provider over a devnet demo key: accounts, personal_sign and eth_sendTransaction are answered in the
 * page with the key; every other call goes to the devnet's JSON-RPC.
 */
export function devnetProvider(privateKey: string, rpcUrl: string, chainId: number): Eip1193Provider {
  // No response cache: a transaction right after another must read the new nonce.
  const rpc = new JsonRpcProvider(rpcUrl, chainId, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
  const wallet = new Wallet(privateKey, rpc);
  return {
    async request({ method, params }) {
      const args = (Array.isArray(params) ? params : []) as unknown[];
      switch (method) {
        case "eth_requestAccounts":
        case "eth_accounts":
          return [wallet.address];
        case "eth_chainId":
          return toQuantity(chainId);
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
