/**
 * Settings: the signed-in wallet, its API keys (create, shown once with a copy button; list; revoke), the MCP apps
 * connected by OAuth (disconnect) and its webhooks.
 */
import { useState } from "react";
import { Alert, Badge, Button, Card, Code, Group, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { describeError, marketApi } from "../api";
import { SESSION_KEY_LABEL, useSession, type Session } from "../session";
import { SignInPanel } from "../components/SignIn";
import { Webhooks } from "../components/Webhooks";
import { ConnectedClients } from "../components/ConnectedClients";
import { formatIso } from "../format";
import type { ApiKeyCreated } from "../types";
import { ShownOnce } from "../components/ShownOnce";

export function SettingsPage() {
  const { session, signOut } = useSession();
  return (
    <Stack maw={900}>
      <Title order={2}>Settings</Title>
      {session ? (
        <>
          <Card withBorder>
            <Group justify="space-between" wrap="wrap">
              <Stack gap={2}>
                <Text size="sm" c="dimmed">
                  Signed in with {session.walletName} as
                </Text>
                <Code data-testid="session-address">{session.address}</Code>
                <Text size="xs" c="dimmed">
                  Session until {formatIso(session.expiresAt)}; kept in this tab only.
                </Text>
              </Stack>
              <Button variant="default" onClick={() => void signOut()}>
                Sign out
              </Button>
            </Group>
          </Card>
          <ApiKeys session={session} />
          <ConnectedClients session={session} />
          <Webhooks session={session} />
        </>
      ) : (
        <SignInPanel />
      )}
      <Text size="sm" c="dimmed">
        Hosted agents (the agents the marketplace runs for you) are on the Hosted agents page.
      </Text>
    </Stack>
  );
}

function ApiKeys({ session }: { session: Session }) {
  const queryClient = useQueryClient();
  const [label, setLabel] = useState("");
  const [created, setCreated] = useState<ApiKeyCreated | null>(null);
  const keys = useQuery({
    queryKey: ["me", "api-keys", session.address],
    queryFn: () => marketApi().listApiKeys(session.sessionToken),
  });
  const create = useMutation({
    mutationFn: () => marketApi().createApiKey(label.trim() ? { label: label.trim() } : {}, session.sessionToken),
    onSuccess: (key) => {
      setCreated(key);
      setLabel("");
      void queryClient.invalidateQueries({ queryKey: ["me", "api-keys"] });
    },
  });
  // Revoking asks first (the key stops working at once, wherever it is used); a revoked key's "copy it now" banner
  // goes away with it.
  const [confirming, setConfirming] = useState<number | null>(null);
  const revoke = useMutation({
    mutationFn: (id: number) => marketApi().revokeApiKey(id, session.sessionToken),
    onSuccess: (_answer, id) => {
      setConfirming(null);
      setCreated((shown) => (shown?.id === id ? null : shown));
      return queryClient.invalidateQueries({ queryKey: ["me", "api-keys"] });
    },
  });

  return (
    <Card withBorder>
      <Stack>
        <Title order={3}>API keys</Title>
        <Text size="sm" c="dimmed">
          A key acts as this wallet on every API route (X-API-Key or Authorization: Bearer). Agents and scripts use
          keys; revoking one takes effect on its next request. A key made here never expires; this browser
          session&apos;s own key ends with the session.
        </Text>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            create.mutate();
          }}
        >
          <Group align="flex-end" wrap="wrap">
            <TextInput
              label="Label (optional)"
              placeholder="e.g. my agent on the build server"
              value={label}
              maxLength={100}
              onChange={(event) => setLabel(event.currentTarget.value)}
              style={{ flex: "1 1 240px" }}
            />
            <Button type="submit" loading={create.isPending}>
              Create key
            </Button>
          </Group>
        </form>
        {create.isError && (
          <Alert color="red" role="alert">
            {describeError(create.error)}
          </Alert>
        )}
        {created && (
          <ShownOnce
            title="New key: copy it now, it is shown only once"
            value={created.key}
            copyLabel="Copy"
            testId="new-key"
            onDismiss={() => setCreated(null)}
          />
        )}
        {keys.isError && <Alert color="red">{describeError(keys.error)}</Alert>}
        <Table.ScrollContainer minWidth={560}>
          <Table striped highlightOnHover aria-label="API keys">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Prefix</Table.Th>
                <Table.Th>Label</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th>Expires</Table.Th>
                <Table.Th>State</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(keys.data?.keys ?? []).map((key) => (
                <Table.Tr key={key.id} data-testid={`key-${key.prefix}`}>
                  <Table.Td>
                    <Code>{key.prefix}…</Code>
                  </Table.Td>
                  <Table.Td>
                    {key.label ?? (
                      <Text c="dimmed" span size="sm">
                        none
                      </Text>
                    )}
                    {key.id === session.apiKeyId && key.label === SESSION_KEY_LABEL && (
                      <Badge ml="xs" size="xs" variant="outline">
                        this session
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td>{formatIso(key.createdAt)}</Table.Td>
                  <Table.Td>{formatIso(key.lastUsedAt)}</Table.Td>
                  <Table.Td data-testid="key-expires">{key.expiresAt ? formatIso(key.expiresAt) : "never"}</Table.Td>
                  <Table.Td>
                    {key.revokedAt ? (
                      <Badge color="gray" variant="light">
                        revoked {formatIso(key.revokedAt)}
                      </Badge>
                    ) : key.expiresAt && Date.parse(key.expiresAt) <= Date.now() ? (
                      <Badge color="gray" variant="light">
                        expired
                      </Badge>
                    ) : confirming === key.id ? (
                      <Group gap={4} wrap="nowrap" role="group" aria-label={`Confirm revoking key ${key.prefix}`}>
                        <Text size="xs">Revoke? Whatever uses it stops working.</Text>
                        <Button
                          size="xs"
                          color="red"
                          aria-label={`Yes, revoke key ${key.prefix}`}
                          loading={revoke.isPending && revoke.variables === key.id}
                          onClick={() => revoke.mutate(key.id)}
                        >
                          Yes, revoke
                        </Button>
                        <Button size="xs" variant="default" onClick={() => setConfirming(null)}>
                          Keep it
                        </Button>
                      </Group>
                    ) : (
                      <Button
                        size="xs"
                        color="red"
                        variant="light"
                        aria-label={`Revoke key ${key.prefix}`}
                        disabled={key.id === session.apiKeyId}
                        onClick={() => setConfirming(key.id)}
                      >
                        Revoke
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
        {revoke.isError && <Alert color="red">{describeError(revoke.error)}</Alert>}
      </Stack>
    </Card>
  );
}
