/** One task: state, terms, deadlines in local time, the on-chain record, the escrow's events, and the result. */
import {
  Alert,
  Anchor,
  Card,
  Code,
  Group,
  Loader,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Timeline,
  Title,
} from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useParams } from "react-router";
import { describeError, marketApi } from "../api";
import { useDevnetWallets, useSettlement } from "../hooks";
import { useSession } from "../session";
import { useMarketEvents } from "../events";
import { readProvider, taskTimeline } from "../escrow";
import { formatAmount, formatTime, ONCHAIN_STATUS, shortAddress } from "../format";
import { StatusBadge } from "../components/TaskCard";
import type { OnChainTask, TaskMeta, TaskState } from "../types";

type TaskDetail = OnChainTask & { a2aMeta: TaskMeta | null; a2aState: TaskState | null; resultData?: unknown };

const ZERO = /^0x0{40}$/i;

export function TaskDetailPage() {
  const { id = "" } = useParams();
  const { session } = useSession();
  const settlement = useSettlement();
  const devnet = useDevnetWallets();
  const queryClient = useQueryClient();
  // Signed in as a party of the task, its events refresh it at once; polling stays as the fallback (slower when live).
  const live = useMarketEvents((event) => {
    const known = queryClient.getQueryData<TaskDetail>(["task", id, session?.address ?? null]);
    if (known && (event.taskHash === known.taskHash || event.onChainTaskId === String(known.taskId)))
      void queryClient.invalidateQueries({ queryKey: ["task", id] });
  });
  const task = useQuery({
    queryKey: ["task", id, session?.address ?? null],
    queryFn: () => marketApi(session).task(id),
    refetchInterval: (query) =>
      query.state.data && [4, 5].includes(query.state.data.status) ? false : live ? 15_000 : 3000,
  });
  // The task's own chain: its escrow, token and (on the devnet) RPC.
  const chain = settlement.data?.chains.find((c) => c.chain === task.data?.chain);
  const provider = readProvider(
    session?.provider,
    devnet.data?.chains.find((c) => c.chain === task.data?.chain)?.rpcUrl,
  );
  const escrow = chain?.escrowAddress;
  const timeline = useQuery({
    queryKey: ["timeline", chain?.chain, escrow, task.data?.taskId, task.data?.status, session?.address ?? null],
    queryFn: () => taskTimeline(provider!, { chainId: chain!.chainId!, escrow: escrow! }, task.data!.taskId),
    enabled: Boolean(provider && escrow && chain?.chainId && task.data),
  });
  if (task.isLoading) return <Loader role="status" aria-label="Loading the task" />;
  if (task.isError) return <Alert color="red">{describeError(task.error)}</Alert>;
  const t = task.data!;
  const meta = t.a2aMeta;
  const symbol = chain?.token?.symbol ?? "USDC";
  const decimals = chain?.token?.decimals ?? 6;
  const title = meta?.privacy === "public" && meta.publicBrief ? meta.publicBrief : `Task #${t.taskId}`;

  return (
    <Stack maw={1000}>
      <Group justify="space-between" align="flex-start" wrap="nowrap">
        <Title order={2} style={{ overflowWrap: "anywhere" }}>
          {title}
        </Title>
        <StatusBadge status={t.a2aState?.status ?? "open"} />
      </Group>
      {![4, 5].includes(t.status) && (
        <Text size="xs" c="dimmed" data-testid="refresh-mode" aria-live="polite">
          {live ? "live updates" : "refreshed every 3 s"}
        </Text>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder>
          <Title order={3} size="h4" mb="xs">
            Terms
          </Title>
          <Table variant="vertical" layout="fixed">
            <Table.Tbody>
              <Row label="Reward" value={formatAmount(t.amount, decimals, symbol)} />
              <Row label="Verification" value={meta?.verificationMode ?? "—"} />
              <Row label="Privacy" value={meta?.privacy ?? "—"} />
              <Row label="Capabilities" value={meta?.requiredCapabilities.join(", ") || "none"} />
              <Row label="Created" value={formatTime(t.createdAt)} />
              <Row label="Deadline" value={formatTime(t.effectiveDeadline || t.deadline)} />
              <Row label="Poster" value={<Code>{shortAddress(t.poster)}</Code>} />
              <Row label="Worker" value={ZERO.test(t.worker) ? "none yet" : <Code>{shortAddress(t.worker)}</Code>} />
            </Table.Tbody>
          </Table>
        </Card>
        <Card withBorder>
          <Title order={3} size="h4" mb="xs">
            On-chain record
          </Title>
          <Table variant="vertical" layout="fixed">
            <Table.Tbody>
              <Row label="Chain" value={`${t.chain} (chain ${t.chainId ?? "unknown"})`} />
              <Row label="Task id" value={String(t.taskId)} />
              <Row label="Escrow" value={<Code>{shortAddress(escrow)}</Code>} />
              <Row label="Status" value={`${t.status} (${ONCHAIN_STATUS[t.status] ?? "unknown"})`} />
              <Row label="Task hash" value={<Code style={{ wordBreak: "break-all" }}>{t.taskHash}</Code>} />
              <Row label="Attempts" value={String(t.submissionAttempts)} />
              <Row label="Payout" value={t.payout ? formatAmount(t.payout, decimals, symbol) : "—"} />
              <Row label="Fee" value={t.fee ? formatAmount(t.fee, decimals, symbol) : "—"} />
              <Row label="Refund" value={t.refund ? formatAmount(t.refund, decimals, symbol) : "—"} />
            </Table.Tbody>
          </Table>
        </Card>
      </SimpleGrid>
      <Card withBorder>
        <Title order={3} size="h4" mb="sm">
          Timeline (escrow events)
        </Title>
        {!provider && <Text size="sm">Sign in to read the escrow&apos;s events through your wallet.</Text>}
        {timeline.isError && <Alert color="red">{describeError(timeline.error)}</Alert>}
        {timeline.data && (
          <Timeline active={timeline.data.length - 1} bulletSize={14} lineWidth={2}>
            {timeline.data.map((entry) => (
              <Timeline.Item key={`${entry.txHash}-${entry.name}`} title={entry.name}>
                <Text size="xs" c="dimmed">
                  {formatTime(entry.time)} · block {entry.blockNumber}
                </Text>
              </Timeline.Item>
            ))}
          </Timeline>
        )}
      </Card>
      <Card withBorder>
        <Title order={3} size="h4" mb="sm">
          Result
        </Title>
        {"resultData" in t ? (
          t.resultData == null ? (
            <Text size="sm">No deliverable yet.</Text>
          ) : (
            <Code block data-testid="result" style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
              {JSON.stringify(t.resultData, null, 2)}
            </Code>
          )
        ) : (
          <Text size="sm">Only the poster and the worker see the result of a private task.</Text>
        )}
      </Card>
      <Text size="xs" c="dimmed" style={{ overflowWrap: "anywhere" }}>
        Raw: <Anchor href={`/api/v1/tasks/${t.taskHash}`}>/api/v1/tasks/{t.taskHash}</Anchor>
      </Text>
    </Stack>
  );
}

function Row({ label, value }: { label: string; value: React.ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th w={120}>{label}</Table.Th>
      <Table.Td style={{ overflowWrap: "anywhere" }}>{value}</Table.Td>
    </Table.Tr>
  );
}
