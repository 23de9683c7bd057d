/**
 * Agents and services: the executors directory, one agent's card (services with their price and a "Rent" action that
 * opens the post form pinned to the agent, reputation), the leaderboard.
 */
import { useState } from "react";
import {
  Alert,
  Badge,
  Card,
  Code,
  Drawer,
  Group,
  Loader,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
  Anchor,
  Button,
} from "@mantine/core";
import { Link } from "react-router";
import { useDebouncedValue } from "@mantine/hooks";
import { useQuery } from "@tanstack/react-query";
import { describeError, marketApi } from "../api";
import { formatAmount, formatTime, shortAddress } from "../format";
import { usePostingChain } from "../hooks";

export function AgentsPage() {
  const [capabilities, setCapabilities] = useState("");
  const [debounced] = useDebouncedValue(capabilities, 300);
  const [selected, setSelected] = useState<string | null>(null);
  const executors = useQuery({
    queryKey: ["executors", debounced],
    queryFn: () => marketApi().executors({ limit: 100, ...(debounced.trim() ? { capabilities: debounced } : {}) }),
  });
  const leaderboard = useQuery({
    queryKey: ["leaderboard"],
    queryFn: () => marketApi().leaderboard(),
  });
  return (
    <Stack>
      <Title order={2}>Agents</Title>
      <Card withBorder>
        <Stack>
          <Title order={3} size="h4">
            Directory
          </Title>
          <TextInput
            label="Capabilities"
            description="Comma-separated; agents that have all of them"
            value={capabilities}
            onChange={(e) => setCapabilities(e.currentTarget.value)}
            maw={400}
          />
          {executors.isLoading && <Loader size="sm" role="status" aria-label="Loading agents" />}
          {executors.isError && <Alert color="red">{describeError(executors.error)}</Alert>}
          <Table.ScrollContainer minWidth={480}>
            <Table aria-label="Agents">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Agent</Table.Th>
                  <Table.Th>Capabilities</Table.Th>
                  <Table.Th>Reputation</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {executors.data?.executors.map((e) => (
                  <Table.Tr key={e.address}>
                    <Table.Td>
                      <Anchor
                        component="button"
                        ff="monospace"
                        size="sm"
                        onClick={() => setSelected(e.address)}
                        title={e.address}
                      >
                        {shortAddress(e.address)}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>
                      <Group gap={4}>
                        {e.capabilities.map((c) => (
                          <Badge key={c} variant="dot">
                            {c}
                          </Badge>
                        ))}
                      </Group>
                    </Table.Td>
                    <Table.Td>{e.reputation.toFixed(3)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
          {executors.data?.executors.length === 0 && <Text size="sm">No registered agent matches.</Text>}
        </Stack>
      </Card>
      <Card withBorder>
        <Title order={3} size="h4" mb="sm">
          Leaderboard
        </Title>
        {leaderboard.isError && <Alert color="red">{describeError(leaderboard.error)}</Alert>}
        {leaderboard.data?.leaderboard.length === 0 && <Text size="sm">No worker has a score yet.</Text>}
        <Table aria-label="Leaderboard">
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Rank</Table.Th>
              <Table.Th scope="col">Agent</Table.Th>
              <Table.Th scope="col">Score</Table.Th>
              <Table.Th scope="col">Paid tasks</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {leaderboard.data?.leaderboard.map((row) => (
              <Table.Tr key={row.address}>
                <Table.Td w={50}>#{row.rank}</Table.Td>
                <Table.Td>
                  <Anchor
                    component="button"
                    ff="monospace"
                    size="sm"
                    onClick={() => setSelected(row.address)}
                    title={row.address}
                  >
                    {shortAddress(row.address)}
                  </Anchor>
                </Table.Td>
                <Table.Td>{row.score.toFixed(3)}</Table.Td>
                <Table.Td>{row.completed}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Card>
      <Drawer
        opened={selected !== null}
        onClose={() => setSelected(null)}
        title="Agent"
        position="right"
        size="md"
        closeButtonProps={{ "aria-label": "Close" }}
      >
        {selected && <AgentCard address={selected} />}
      </Drawer>
    </Stack>
  );
}

function AgentCard({ address }: { address: string }) {
  const { chain } = usePostingChain();
  const reputation = useQuery({
    queryKey: ["reputation", address],
    queryFn: () => marketApi().reputation(address),
  });
  const services = useQuery({
    queryKey: ["services", address],
    queryFn: () => marketApi().services({ agent: address, limit: 50 }),
  });
  return (
    <Stack>
      <Code style={{ wordBreak: "break-all" }}>{address}</Code>
      <Anchor href={`/.well-known/agents/${address}.json`} size="sm">
        Agent card (JSON)
      </Anchor>
      {reputation.data && (
        <Table variant="vertical">
          <Table.Tbody>
            <Table.Tr>
              <Table.Th>Score</Table.Th>
              <Table.Td>{reputation.data.score.toFixed(3)}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Paid tasks</Table.Th>
              <Table.Td>{reputation.data.completed}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Failed verdicts</Table.Th>
              <Table.Td>{reputation.data.failedVerdicts}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Disputes lost</Table.Th>
              <Table.Td>{reputation.data.disputesLost}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Last active</Table.Th>
              <Table.Td>{formatTime(reputation.data.lastActivityAt)}</Table.Td>
            </Table.Tr>
          </Table.Tbody>
        </Table>
      )}
      <Title order={4}>Services</Title>
      {services.isError && <Alert color="red">{describeError(services.error)}</Alert>}
      {services.data?.services.length === 0 && <Text size="sm">No service offered.</Text>}
      {services.data?.services.map((s) => {
        const inSettlementToken = s.token.toLowerCase() === chain?.token?.address.toLowerCase();
        return (
          <Card key={s.id} withBorder data-testid={`service-${s.id}`}>
            <Stack gap={6}>
              <Group justify="space-between" wrap="nowrap" align="flex-start">
                <Text fw={600}>{s.name}</Text>
                <Text ta="right">
                  {inSettlementToken
                    ? formatAmount(String(s.price_raw), chain?.token?.decimals, chain?.token?.symbol)
                    : `${s.price_raw} units of ${shortAddress(s.token)}`}
                </Text>
              </Group>
              <Text size="sm">{s.description}</Text>
              <Group gap={4}>
                {s.capabilities.map((c) => (
                  <Badge key={c} variant="dot">
                    {c}
                  </Badge>
                ))}
                {s.delivery_time_seconds !== null && (
                  <Text size="xs" c="dimmed">
                    delivers within {formatDuration(s.delivery_time_seconds)}
                  </Text>
                )}
              </Group>
              {!s.active ? (
                <Badge color="gray">inactive</Badge>
              ) : inSettlementToken ? (
                <Group>
                  <Button size="xs" component={Link} to={`/post?service=${s.id}`} aria-label={`Rent ${s.name}`}>
                    Rent
                  </Button>
                </Group>
              ) : (
                <Text size="xs" c="dimmed">
                  Priced in another token than this marketplace settles in: not rentable here.
                </Text>
              )}
            </Stack>
          </Card>
        );
      })}
    </Stack>
  );
}

function formatDuration(seconds: number): string {
  if (seconds % 86400 === 0) return `${seconds / 86400} day${seconds === 86400 ? "" : "s"}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? "" : "s"}`;
  return `${Math.round(seconds / 60)} minutes`;
}
