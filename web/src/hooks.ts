/** Server state shared by several pages (react-query caches it by key). */
import { useQuery } from "@tanstack/react-query";
import { marketApi } from "./api";

export function useSettlement() {
  return useQuery({
    queryKey: ["settlement"],
    queryFn: () => marketApi().settlement(),
    staleTime: 60_000,
  });
}

/** The posting chain's entry of the settlement record (escrow, token, chain id). */
export function usePostingChain() {
  const settlement = useSettlement();
  const chain = settlement.data?.chains.find((c) => c.chain === settlement.data?.postingChain);
  return { ...settlement, chain };
}

/** The devnet's demo wallets, or null anywhere else (the server answers NOT_FOUND). */
export function useDevnetWallets() {
  return useQuery({
    queryKey: ["devnet-wallets"],
    queryFn: () =>
      marketApi()
        .devnetWallets()
        .catch(() => null),
    staleTime: Infinity,
  });
}
