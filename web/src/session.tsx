/**
 * The signed-in wallet: the EIP-4361 session token (1 hour, API key routes only) and an API key the app creates for
 * this browser session (every other route takes an API key). Both are kept in the tab's sessionStorage, so a reload
 * keeps the session in that tab and closing the tab forgets it; never in localStorage (shared by every tab and kept
 * forever) or a cookie (no cookie means no cross-site request can act as the user). Signing out, or the session's
 * end, revokes the key, and the API ends the key by itself with the session (a web session key; docs/web.md,
 * "Session").
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { getAddress, hexlify, toUtf8Bytes } from "ethers";
import { useQueryClient } from "@tanstack/react-query";
import { marketApi, type Credentials } from "./api";
import { devnetProvider, discoverWallets, type Eip1193Provider, type WalletChoice } from "./wallet";

/** The label of the key the app makes at sign-in; shown in Settings as "this browser session". */
export const SESSION_KEY_LABEL = "web app session";

export interface Session extends Required<Credentials> {
  address: string;
  expiresAt: string;
  apiKeyId: number;
  walletName: string;
  provider: Eip1193Provider;
}

interface SessionContext {
  session: Session | null;
  /** Whether the last session ended by itself (its time ran out) rather than by signing out. */
  expired: boolean;
  signIn(wallet: WalletChoice): Promise<Session>;
  signOut(): Promise<void>;
}

/** Signed out this long before the session token expires, so the session key is still revocable. */
export const SIGN_OUT_BEFORE_EXPIRY_MS = 60_000;

/** The tab's sessionStorage entry: the session without its wallet provider (found again on reload by `walletId`). */
export const SESSION_STORAGE_KEY = "escrow-market.session";
type StoredSession = Omit<Session, "provider"> & { walletId: string };

function readStored(): StoredSession | null {
  try {
    const raw = sessionStorage.getItem(SESSION_STORAGE_KEY);
    return raw ? (JSON.parse(raw) as StoredSession) : null;
  } catch {
    return null;
  }
}

/** How long a reload waits for the browser wallet that signed in to announce itself again. */
const WALLET_REDISCOVERY_MS = 1500;

/**
 * The provider of the wallet that signed in, found again after a reload: the devnet wallet from the devnet's demo
 * accounts (by address), a browser wallet by its EIP-6963 id. Null when it is gone.
 */
async function findWallet(stored: StoredSession): Promise<Eip1193Provider | null> {
  if (stored.walletId === "devnet") {
    const wallets = await marketApi()
      .devnetWallets()
      .catch(() => null);
    const account = wallets?.accounts.find((a) => a.address.toLowerCase() === stored.address.toLowerCase());
    return wallets && account ? devnetProvider(account.privateKey, wallets.chains) : null;
  }
  return new Promise((resolve) => {
    let stop: () => void = () => undefined;
    const timer = setTimeout(() => {
      stop();
      resolve(null);
    }, WALLET_REDISCOVERY_MS);
    stop = discoverWallets((wallets) => {
      const wallet = wallets.find((w) => w.id === stored.walletId);
      if (!wallet) return;
      clearTimeout(timer);
      queueMicrotask(() => stop());
      resolve(wallet.provider);
    });
  });
}

/** Revokes the session's API key with its session token (an ended session cannot: the key stays listed). */
function revokeSessionKey(session: Pick<Session, "apiKeyId" | "sessionToken" | "apiKey">): Promise<unknown> {
  return marketApi()
    .revokeApiKey(session.apiKeyId, session.sessionToken)
    .catch(() => undefined);
}

const Context = createContext<SessionContext | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(() => readStored() !== null);
  const [expired, setExpired] = useState(false);
  const queryClient = useQueryClient();

  // A reload: the tab's stored session comes back with its wallet; one that ended, or whose wallet is gone, is
  // revoked and forgotten.
  useEffect(() => {
    const stored = readStored();
    if (!stored) return;
    let cancelled = false;
    void (async () => {
      const ended = Date.parse(stored.expiresAt) - Date.now() <= SIGN_OUT_BEFORE_EXPIRY_MS;
      const provider = ended ? null : await findWallet(stored);
      if (cancelled) return;
      if (provider) {
        const { walletId: _walletId, ...rest } = stored;
        setSession({ ...rest, provider });
      } else {
        sessionStorage.removeItem(SESSION_STORAGE_KEY);
        await revokeSessionKey(stored);
        if (ended) setExpired(true);
      }
      setRestoring(false);
    })();
    return () => {
      cancelled = true;
    };
  }, []);

  const signIn = useCallback(
    async (wallet: WalletChoice) => {
      const accounts = (await wallet.provider.request({ method: "eth_requestAccounts" })) as string[];
      if (!accounts?.[0]) throw new Error("The wallet shared no account.");
      const address = getAddress(accounts[0]);
      const api = marketApi();
      const nonce = await api.authNonce(address);
      const signature = (await wallet.provider.request({
        method: "personal_sign",
        params: [hexlify(toUtf8Bytes(nonce.message)), address],
      })) as string;
      const signed = await api.authVerify({ message: nonce.message, signature });
      // A web session key: the API ends it by itself with the session (SESSION_TTL_SECONDS), even if the tab is
      // closed without signing out.
      const key = await api.createApiKey({ label: SESSION_KEY_LABEL, sessionKey: true }, signed.sessionToken);
      const next: Session = {
        address: signed.address,
        expiresAt: signed.expiresAt,
        sessionToken: signed.sessionToken,
        apiKey: key.key,
        apiKeyId: key.id,
        walletName: wallet.name,
        provider: wallet.provider,
      };
      queryClient.removeQueries({ queryKey: ["me"] });
      const { provider: _provider, ...stored } = next;
      sessionStorage.setItem(SESSION_STORAGE_KEY, JSON.stringify({ ...stored, walletId: wallet.id }));
      setSession(next);
      return next;
    },
    [queryClient],
  );

  const signOut = useCallback(async () => {
    sessionStorage.removeItem(SESSION_STORAGE_KEY);
    if (session) {
      // The key first (its revocation needs the session token), then the token itself, on every API process.
      await revokeSessionKey(session);
      await marketApi()
        .signOut(session.sessionToken)
        .catch(() => undefined);
    }
    queryClient.removeQueries({ queryKey: ["me"] });
    setSession(null);
  }, [session, queryClient]);

  // The session token lasts an hour (SESSION_TTL_SECONDS): sign out just before, revoking the session key.
  useEffect(() => {
    if (!session) return;
    const ms = Math.max(0, Date.parse(session.expiresAt) - Date.now() - SIGN_OUT_BEFORE_EXPIRY_MS);
    const timer = setTimeout(() => void signOut().then(() => setExpired(true)), ms);
    return () => clearTimeout(timer);
  }, [session, signOut]);

  const value = useMemo(() => ({ session, expired, signIn, signOut }), [session, expired, signIn, signOut]);
  // While a reload restores the session, nothing is shown: no page should ask to sign in meanwhile.
  return <Context.Provider value={value}>{restoring ? null : children}</Context.Provider>;
}

export function useSession(): SessionContext {
  const context = useContext(Context);
  if (!context) throw new Error("useSession outside SessionProvider");
  return context;
}
