/** Settings: the MCP clients connected to the wallet by OAuth (docs/oauth.md), each disconnectable. */
import { useState } from "react";
import { Alert, Badge, Button, Card, Code, Group, Stack, Table, Text, Title } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { describeError } from "../api";
import type { Session } from "../session";
import { formatIso } from "../format";
import { disconnectClient, listConnectedClients } from "../oauth";

export function ConnectedClients({ session }: { session: Session }) {
  const queryClient = useQueryClient();
  const clients = useQuery({
    queryKey: ["me", "oauth-clients", session.address],
    queryFn: () => listConnectedClients(session.sessionToken),
  });
  const [confirming, setConfirming] = useState<string | null>(null);
  const disconnect = useMutation({
    mutationFn: (clientId: string) => disconnectClient(clientId, session.sessionToken),
    onSuccess: () => {
      setConfirming(null);
      return queryClient.invalidateQueries({ queryKey: ["me", "oauth-clients"] });
    },
  });
  const list = clients.data?.clients ?? [];
  return (
    <Card withBorder>
      <Stack>
        <Title order={3}>Connected apps</Title>
        <Text size="sm" c="dimmed">
          MCP hosts you approved with OAuth act as this wallet within the scopes you granted. Disconnecting one ends its
          access at once: its next call is refused.
        </Text>
        {clients.isError && <Alert color="red">{describeError(clients.error)}</Alert>}
        {clients.isSuccess && list.length === 0 && (
          <Text size="sm" data-testid="no-connected-apps">
            No app is connected.
          </Text>
        )}
        {list.length > 0 && (
          <Table.ScrollContainer minWidth={560}>
            <Table striped aria-label="Connected apps">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>App</Table.Th>
                  <Table.Th>Scopes</Table.Th>
                  <Table.Th>Connected</Table.Th>
                  <Table.Th>Last used</Table.Th>
                  <Table.Th />
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((client) => {
                  const name = client.name ?? client.clientId;
                  return (
                    <Table.Tr key={client.clientId} data-testid={`oauth-client-${client.clientId}`}>
                      <Table.Td>
                        <Text size="sm">{name}</Text>
                        <Code>{client.clientId}</Code>
                      </Table.Td>
                      <Table.Td>
                        <Group gap={4}>
                          {client.scopes.map((scope) => (
                            <Badge key={scope} variant="light" tt="none">
                              {scope}
                            </Badge>
                          ))}
                        </Group>
                      </Table.Td>
                      <Table.Td>{formatIso(client.connectedAt)}</Table.Td>
                      <Table.Td>{formatIso(client.lastUsedAt)}</Table.Td>
                      <Table.Td>
                        {confirming === client.clientId ? (
                          <Group gap={4} wrap="nowrap">
                            <Button
                              size="xs"
                              color="red"
                              aria-label={`Yes, disconnect ${name}`}
                              loading={disconnect.isPending}
                              onClick={() => disconnect.mutate(client.clientId)}
                            >
                              Yes, disconnect
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
                            aria-label={`Disconnect ${name}`}
                            onClick={() => setConfirming(client.clientId)}
                          >
                            Disconnect
                          </Button>
                        )}
                      </Table.Td>
                    </Table.Tr>
                  );
                })}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        {disconnect.isError && <Alert color="red">{describeError(disconnect.error)}</Alert>}
      </Stack>
    </Card>
  );
}
