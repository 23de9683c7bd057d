/**
 * The signed-in wallet, kept in memory only (a reload signs out): the EIP-4361 session token (1 hour, API key routes
 * only) and an API key the app creates for this browser session (every other route takes an API key). Signing out
 * revokes that key. Nothing is written to localStorage or a cookie, so a script injected later cannot read a stored
 * credential, and no cookie means no cross-site request can act as the user (docs/web.md, "Session").
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { getAddress, hexlify, toUtf8Bytes } from "ethers";
import { useQueryClient } from "@tanstack/react-query";
import { api, type Credentials } from "./api";
import type { ApiKeyCreated, NonceResponse, SessionResponse } from "./types";
import type { Eip1193Provider, WalletChoice } from "./wallet";

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

const Context = createContext<SessionContext | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | null>(null);
  const [expired, setExpired] = useState(false);
  const queryClient = useQueryClient();

  const signIn = useCallback(
    async (wallet: WalletChoice) => {
      const accounts = (await wallet.provider.request({ method: "eth_requestAccounts" })) as string[];
      if (!accounts?.[0]) throw new Error("The wallet shared no account.");
      const address = getAddress(accounts[0]);
      const nonce = await api<NonceResponse>("/api/v1/auth/nonce", { body: { address } });
      const signature = (await wallet.provider.request({
        method: "personal_sign",
        params: [hexlify(toUtf8Bytes(nonce.message)), address],
      })) as string;
      const signed = await api<SessionResponse>("/api/v1/auth/verify", {
        body: { message: nonce.message, signature },
      });
      const key = await api<ApiKeyCreated>("/api/v1/api-keys", {
        body: { label: SESSION_KEY_LABEL },
        auth: { sessionToken: signed.sessionToken },
        useSession: true,
      });
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
      setSession(next);
      return next;
    },
    [queryClient],
  );

  const signOut = useCallback(async () => {
    if (session) {
      await api(`/api/v1/api-keys/${session.apiKeyId}`, {
        method: "DELETE",
        auth: session,
        useSession: true,
      }).catch(() => undefined); // an expired session cannot revoke; the key stays listed in Settings
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
  return <Context.Provider value={value}>{children}</Context.Provider>;
}

export function useSession(): SessionContext {
  const context = useContext(Context);
  if (!context) throw new Error("useSession outside SessionProvider");
  return context;
}
