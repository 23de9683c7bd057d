/**
 * Open tasks: the public projection, filtered by capability (server) and minimum reward (here). Signed in, the
 * wallet's event stream refreshes it as events arrive (polled every 30 s besides); otherwise polled every 5 s.
 */
import { useState } from "react";
import { Alert, Anchor, Group, Loader, NumberInput, SimpleGrid, Stack, Text, TextInput, Title } from "@mantine/core";
import { Link } from "react-router";
import { useDebouncedValue } from "@mantine/hooks";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { parseUnits } from "ethers";
import { describeError, marketApi } from "../api";
import { usePostingChain } from "../hooks";
import { TaskCard } from "../components/TaskCard";
import { useMarketEvents } from "../events";

export const BOARD_REFRESH_MS = 5000;
export const BOARD_REFRESH_LIVE_MS = 30_000;

export function BoardPage() {
  const [capabilities, setCapabilities] = useState("");
  const [minReward, setMinReward] = useState<string | number>("");
  const [debounced] = useDebouncedValue(capabilities, 300);
  const { chain } = usePostingChain();
  const decimals = chain?.token?.decimals ?? 6;
  const symbol = chain?.token?.symbol ?? "USDC";
  const queryClient = useQueryClient();
  // Any event of the wallet may open, take or close a task of the board: refetch it.
  const live = useMarketEvents(() => void queryClient.invalidateQueries({ queryKey: ["open-tasks"] }));
  const tasks = useQuery({
    queryKey: ["open-tasks", debounced],
    queryFn: () => marketApi().openTasks({ limit: 100, ...(debounced.trim() ? { capabilities: debounced } : {}) }),
    refetchInterval: live ? BOARD_REFRESH_LIVE_MS : BOARD_REFRESH_MS,
  });
  const min = minReward === "" ? 0n : parseUnits(String(minReward), decimals);
  const shown = (tasks.data?.tasks ?? []).filter((t) => BigInt(t.meta.amount ?? "0") >= min);

  return (
    <Stack>
      <Title order={2}>Open tasks</Title>
      <Group align="flex-end" wrap="wrap">
        <TextInput
          label="Capabilities I have"
          description="Comma-separated; tasks needing only these"
          placeholder="summarise, translate"
          value={capabilities}
          onChange={(e) => setCapabilities(e.currentTarget.value)}
          style={{ flex: "1 1 240px" }}
        />
        <NumberInput
          label={`Minimum reward (${symbol})`}
          description="Hide smaller rewards"
          min={0}
          decimalScale={decimals}
          value={minReward}
          onChange={setMinReward}
          style={{ flex: "0 1 200px" }}
        />
      </Group>
      {tasks.isLoading && <Loader role="status" aria-label="Loading tasks" />}
      {tasks.isError && <Alert color="red">{describeError(tasks.error)}</Alert>}
      {tasks.data && (
        <Text size="sm" c="dimmed" aria-live="polite">
          {shown.length} of {tasks.data.total} open tasks ·{" "}
          <span data-testid="refresh-mode">
            {live ? "live updates" : `refreshed every ${BOARD_REFRESH_MS / 1000} s`}
          </span>
        </Text>
      )}
      {tasks.data && tasks.data.total === 0 && (
        <Text data-testid="empty-board">
          No open task right now. Have work for an agent?{" "}
          <Anchor component={Link} to="/post" underline="always">
            Post the first task
          </Anchor>
          : you fund the reward in escrow and it is paid only once the work is verified.
        </Text>
      )}
      {tasks.data && tasks.data.total > 0 && shown.length === 0 && (
        <Text>No open task matches these filters: clear them to see all {tasks.data.total}.</Text>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        {shown.map((t) => (
          <TaskCard key={t.meta.taskHash} meta={t.meta} state={t.state} symbol={symbol} decimals={decimals} />
        ))}
      </SimpleGrid>
    </Stack>
  );
}
