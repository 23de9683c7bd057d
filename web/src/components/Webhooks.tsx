/**
 * Settings, webhooks: register (URL, optional event types; the signing secret shown once with a copy button), list,
 * delete, and each webhook's delivery outcomes (GET /api/v1/webhooks/{id}/deliveries, polled while shown).
 */
import { useState } from "react";
import {
  Alert,
  Badge,
  Button,
  Card,
  Code,
  Group,
  MultiSelect,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { describeError, marketApi } from "../api";
import type { WebhookBody } from "../../../client/sdk/index";
import type { Session } from "../session";
import { formatIso, formatTime } from "../format";
import type { EventType, WebhookCreated, WebhookDelivery, WebhookView } from "../types";
import { ShownOnce } from "./ShownOnce";

/** Every event type with its meaning (a Record, so a type added to the API fails the type check until named here). */
const EVENT_LABELS: Record<EventType, string> = {
  "task.open": "task.open: a public task is open",
  "task.offered": "task.offered: a task is offered to me",
  "task.listed": "task.listed: my task is listed",
  "task.assigned": "task.assigned: a worker is assigned",
  "task.submitted": "task.submitted: work is submitted",
  "task.verdict": "task.verdict: the verifier decided",
  "task.disputed": "task.disputed: a dispute is opened",
  "task.settled": "task.settled: paid, refunded or cancelled",
};
const EVENT_OPTIONS = Object.entries(EVENT_LABELS).map(([value, label]) => ({ value, label }));

const DELIVERY_COLOR: Record<WebhookDelivery["status"], string> = {
  pending: "yellow",
  delivered: "green",
  failed: "red",
};

export function Webhooks({ session }: { session: Session }) {
  const queryClient = useQueryClient();
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<string[]>([]);
  const [created, setCreated] = useState<WebhookCreated | null>(null);
  const urlError = url.trim() && !/^https?:\/\/[^\s]+$/i.test(url.trim()) ? "An http(s) URL" : null;
  const webhooks = useQuery({
    queryKey: ["me", "webhooks", session.address],
    queryFn: () => marketApi(session).listWebhooks(),
  });
  const register = useMutation({
    mutationFn: () =>
      marketApi(session).createWebhook(
        events.length ? { url: url.trim(), events: events as WebhookBody["events"] } : { url: url.trim() },
      ),
    onSuccess: (webhook) => {
      setCreated(webhook);
      setUrl("");
      setEvents([]);
      void queryClient.invalidateQueries({ queryKey: ["me", "webhooks"] });
    },
  });
  const remove = useMutation({
    mutationFn: (id: number) => marketApi(session).deleteWebhook(id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["me", "webhooks"] }),
  });

  return (
    <Card withBorder>
      <Stack>
        <Title order={3}>Webhooks</Title>
        <Text size="sm" c="dimmed">
          The marketplace POSTs the events that concern this wallet to your URL, signed with the webhook&apos;s secret
          (header X-Market-Signature, HMAC-SHA256; see the API documentation). Failed deliveries are retried with
          growing delays, up to 8 attempts.
        </Text>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (url.trim() && !urlError) register.mutate();
          }}
        >
          <Stack gap="xs">
            <TextInput
              label="Endpoint URL"
              placeholder="https://example.com/market-hook"
              value={url}
              required
              maxLength={2000}
              error={urlError}
              onChange={(event) => setUrl(event.currentTarget.value)}
            />
            <MultiSelect
              label="Event types"
              description="None chosen: every type"
              data={EVENT_OPTIONS}
              value={events}
              onChange={setEvents}
              searchable
              clearable
            />
            <Group>
              <Button type="submit" loading={register.isPending} disabled={!url.trim() || !!urlError}>
                Register webhook
              </Button>
            </Group>
          </Stack>
        </form>
        {register.isError && (
          <Alert color="red" role="alert">
            {describeError(register.error)}
          </Alert>
        )}
        {created && (
          <ShownOnce
            title="Webhook registered: copy its signing secret now, it is shown only once"
            value={created.secret}
            copyLabel="Copy secret"
            testId="new-webhook-secret"
            onDismiss={() => setCreated(null)}
          />
        )}
        {webhooks.isError && <Alert color="red">{describeError(webhooks.error)}</Alert>}
        {webhooks.data && webhooks.data.webhooks.length === 0 && (
          <Text size="sm" c="dimmed">
            No webhook registered.
          </Text>
        )}
        {(webhooks.data?.webhooks ?? []).map((webhook) => (
          <Card withBorder key={webhook.id} data-testid={`webhook-${webhook.id}`}>
            <Stack gap="xs">
              <Group justify="space-between" wrap="wrap">
                <Stack gap={2} style={{ minWidth: 0 }}>
                  <Code style={{ wordBreak: "break-all" }}>{webhook.url}</Code>
                  <Text size="xs" c="dimmed">
                    Registered {formatTime(webhook.createdAt)}; events: {webhook.events?.join(", ") ?? "all"}
                  </Text>
                </Stack>
                <Button
                  size="xs"
                  color="red"
                  variant="light"
                  aria-label={`Delete webhook ${webhook.url}`}
                  loading={remove.isPending && remove.variables === webhook.id}
                  onClick={() => remove.mutate(webhook.id)}
                >
                  Delete
                </Button>
              </Group>
              <Deliveries session={session} webhook={webhook} />
            </Stack>
          </Card>
        ))}
        {remove.isError && <Alert color="red">{describeError(remove.error)}</Alert>}
      </Stack>
    </Card>
  );
}

/** The newest deliveries of one webhook (20), refreshed every 4 seconds while the page shows them. */
function Deliveries({ session, webhook }: { session: Session; webhook: WebhookView }) {
  const deliveries = useQuery({
    queryKey: ["me", "webhooks", webhook.id, "deliveries"],
    queryFn: () => marketApi(session).webhookDeliveries(webhook.id),
    refetchInterval: 4000,
  });
  if (deliveries.isError) return <Alert color="red">{describeError(deliveries.error)}</Alert>;
  const rows = (deliveries.data?.deliveries ?? []).slice(0, 20);
  if (deliveries.data && rows.length === 0)
    return (
      <Text size="sm" c="dimmed">
        No delivery yet.
      </Text>
    );
  return (
    <Table.ScrollContainer minWidth={560}>
      <Table striped aria-label={`Deliveries of ${webhook.url}`}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Event</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Attempts</Table.Th>
            <Table.Th>Last answer</Table.Th>
            <Table.Th>Updated</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((d) => (
            <Table.Tr key={d.id} data-testid={`delivery-${d.id}`}>
              <Table.Td>
                {d.eventType ?? "(event expired)"}{" "}
                <Text span size="xs" c="dimmed">
                  #{d.eventId}
                </Text>
              </Table.Td>
              <Table.Td>
                <Badge color={DELIVERY_COLOR[d.status]} variant="light">
                  {d.status}
                </Badge>
                {d.status === "pending" && d.nextAttemptAt && (
                  <Text size="xs" c="dimmed">
                    next try {formatIso(d.nextAttemptAt)}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>{d.attempts}</Table.Td>
              <Table.Td>
                {d.lastStatusCode ?? "—"}
                {d.lastError && (
                  <Text size="xs" c="dimmed">
                    {d.lastError}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>{formatIso(d.updatedAt)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
