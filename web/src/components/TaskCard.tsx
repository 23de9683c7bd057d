import { Badge, Card, Group, Stack, Text, Anchor } from "@mantine/core";
import { Link } from "react-router";
import { formatAmount, formatTime, STATUS_COLOR, STATUS_LABEL } from "../format";
import type { TaskMeta, TaskState } from "../types";

export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge color={STATUS_COLOR[status] ?? "gray"} variant="light" data-testid="task-status" style={{ flexShrink: 0 }}>
      {STATUS_LABEL[status] ?? status}
    </Badge>
  );
}

/** One task in a list: reward, brief (public tasks), capabilities, deadline in local time, state. */
export function TaskCard({
  meta,
  state,
  symbol,
  decimals,
}: {
  meta: TaskMeta;
  state: TaskState;
  symbol?: string;
  decimals?: number;
}) {
  return (
    <Card withBorder padding="md" data-testid={`task-${meta.taskHash}`}>
      <Stack gap={6}>
        <Group justify="space-between" wrap="nowrap" align="flex-start">
          <Anchor component={Link} to={`/tasks/${meta.taskHash}`} fw={600} lineClamp={2}>
            {meta.privacy === "public" && meta.publicBrief ? meta.publicBrief : `Private task #${meta.onChainTaskId}`}
          </Anchor>
          <StatusBadge status={state.status} />
        </Group>
        <Group gap="xs" wrap="wrap">
          <Text fw={700}>{formatAmount(meta.amount, decimals, symbol)}</Text>
          <Badge variant="outline" color="gray" title={`settles on ${meta.chain} (chain ${meta.chainId})`}>
            {meta.chain}
          </Badge>
          <Badge variant="outline" color="gray">
            {meta.verificationMode}
          </Badge>
          <Badge variant="outline" color="gray">
            {meta.privacy}
          </Badge>
          {meta.requiredCapabilities.map((c) => (
            <Badge key={c} variant="dot">
              {c}
            </Badge>
          ))}
        </Group>
        <Text size="xs" c="dimmed">
          Due {formatTime(meta.effectiveDeadline ?? meta.deadline)} · listed {formatTime(meta.listedAt)}
        </Text>
      </Stack>
    </Card>
  );
}
