/** Sign-in with Ethereum (EIP-4361) with a browser wallet or, on the devnet, a demo account. */
import { useEffect, useState } from "react";
import { Alert, Avatar, Button, Card, Group, Select, Stack, Text, Title } from "@mantine/core";
import { useMutation } from "@tanstack/react-query";
import { describeError } from "../api";
import { useDevnetWallets } from "../hooks";
import { useSession } from "../session";
import { devnetProvider, discoverWallets, type WalletChoice } from "../wallet";
import { shortAddress } from "../format";

export function SignInPanel({ reason }: { reason?: string }) {
  const { signIn, expired } = useSession();
  const [wallets, setWallets] = useState<WalletChoice[]>([]);
  const devnet = useDevnetWallets();
  const [demo, setDemo] = useState<string | null>(null);
  useEffect(() => discoverWallets(setWallets), []);
  const mutation = useMutation({ mutationFn: (wallet: WalletChoice) => signIn(wallet) });

  const demoAccounts = devnet.data?.accounts ?? [];
  const chosenDemo = demoAccounts.find((a) => a.address === demo) ?? demoAccounts[0];

  return (
    <Card withBorder padding="lg" maw={560}>
      <Stack>
        <Title order={2} size="h3">
          Sign in with your wallet
        </Title>
        {expired && (
          <Alert color="yellow" role="status">
            Your session ended (sessions last an hour): sign in again.
          </Alert>
        )}
        <Text size="sm" c="dimmed">
          {reason ?? "Sign a message (EIP-4361) with the wallet your API keys and tasks act as. Signing costs nothing."}
        </Text>
        {wallets.length > 0 ? (
          <Stack gap="xs">
            {wallets.map((wallet) => (
              <Button
                key={wallet.id}
                variant="default"
                justify="flex-start"
                leftSection={wallet.icon ? <Avatar src={wallet.icon} size={20} alt="" /> : undefined}
                loading={mutation.isPending && mutation.variables?.id === wallet.id}
                onClick={() => mutation.mutate(wallet)}
              >
                {wallet.name}
              </Button>
            ))}
          </Stack>
        ) : (
          <Text size="sm">No browser wallet found. Install one that supports EIP-1193 (for example MetaMask).</Text>
        )}
        {demoAccounts.length > 0 && chosenDemo && devnet.data && (
          <Stack gap="xs">
            <Text fw={600} size="sm">
              Devnet wallet
            </Text>
            <Text size="xs" c="dimmed">
              This server runs as the devnet: its demo accounts use Hardhat&apos;s public test keys, never real funds.
            </Text>
            <Group align="flex-end" wrap="wrap">
              <Select
                label="Demo account"
                data={demoAccounts.map((a) => ({ value: a.address, label: `${a.role} (${shortAddress(a.address)})` }))}
                value={chosenDemo.address}
                onChange={setDemo}
                allowDeselect={false}
                style={{ flex: "1 1 220px" }}
              />
              <Button
                loading={mutation.isPending && mutation.variables?.id === "devnet"}
                onClick={() =>
                  mutation.mutate({
                    id: "devnet",
                    name: `Devnet wallet (${chosenDemo.role})`,
                    provider: devnetProvider(chosenDemo.privateKey, devnet.data!.chains),
                  })
                }
              >
                Sign in with the devnet wallet
              </Button>
            </Group>
          </Stack>
        )}
        {mutation.isError && (
          <Alert color="red" title="Sign-in failed" role="alert">
            {describeError(mutation.error)}
          </Alert>
        )}
      </Stack>
    </Card>
  );
}
