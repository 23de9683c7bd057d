/**
 * Agent work: the signed-in wallet acting as an agent (a registered executor). The tasks offered to it (pinned to its
 * wallet: rentals and targeted tasks) with Accept, and the tasks it works on with the result form and the verdict.
 * Submitting goes through the SDK's `submitResult`: the service stores the result and builds submitEvidence of its
 * hash, the SDK checks that transaction (from this wallet, to the settlement escrow, exactly submitEvidence of this
 * result's hash) and the wallet signs it. The wallet's event stream refreshes both lists and carries each verdict
 * (task.verdict, task.settled); polling is only the fallback, as on My tasks.
 */
import { useState } from "react";
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Code,
  Group,
  Loader,
  SimpleGrid,
  Stack,
  Text,
  Textarea,
  Title,
} from "@mantine/core";
import { Link } from "react-router";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { isMarketError, submitResult } from "../../../client/sdk/index";
import { describeError, marketApi } from "../api";
import { usePostingChain } from "../hooks";
import { useSession, type Session } from "../session";
import { signerOnChain } from "../wallet";
import { SignInPanel } from "../components/SignIn";
import { TaskCard } from "../components/TaskCard";
import { useMarketEvents } from "../events";
import { formatAmount } from "../format";
import type { TaskMeta, TaskState } from "../types";
import { MY_TASKS_REFRESH_LIVE_MS, MY_TASKS_REFRESH_MS } from "./MyTasks";

/** The last verdict heard on the stream for a task (the lists say the rest). */
interface HeardVerdict {
  passed?: boolean;
  outcome?: string;
}

/** States in which the worker delivers: assigned (first attempt) or verified after a failed verdict (another one). */
const DELIVERABLE = new Set(["assigning", "assigned"]);

export function AgentWorkPage() {
  const { session } = useSession();
  if (!session) return <SignInPanel reason="Sign in with the agent's wallet to accept and deliver its tasks." />;
  return <AgentWork session={session} />;
}

function AgentWork({ session }: { session: Session }) {
  const queryClient = useQueryClient();
  const [verdicts, setVerdicts] = useState<Record<string, HeardVerdict>>({});
  const live = useMarketEvents((event) => {
    if (event.type === "task.verdict" || event.type === "task.settled") {
      setVerdicts((v) => ({
        ...v,
        [event.taskHash]: {
          ...v[event.taskHash],
          ...(event.passed !== undefined ? { passed: event.passed } : {}),
          ...(event.outcome ? { outcome: event.outcome } : {}),
        },
      }));
    }
    void queryClient.invalidateQueries({ queryKey: ["me"] });
  });
  const refreshMs = live ? MY_TASKS_REFRESH_LIVE_MS : MY_TASKS_REFRESH_MS;
  const executor = useQuery({
    queryKey: ["me", "executor", session.address],
    queryFn: () =>
      marketApi(session)
        .ownExecutor()
        .catch((error: unknown) => {
          if (isMarketError(error, "NOT_REGISTERED", "NOT_FOUND")) return null;
          throw error;
        }),
  });
  return (
    <Stack>
      <Title order={2}>Agent work</Title>
      <Text size="sm" c="dimmed">
        Acting as an agent with this wallet: accept the tasks offered to it, deliver the result, and follow the verdict.{" "}
        <span data-testid="refresh-mode">{live ? "Live updates." : `Refreshed every ${refreshMs / 1000} s.`}</span>
      </Text>
      {executor.data === null && (
        <Alert color="yellow" title="This wallet is not a registered agent">
          Register it first (its public key and capabilities): <Code>market register</Code> in the CLI, or{" "}
          <Code>POST /api/v1/a2a/executors</Code>. Tasks are offered to registered agents only.
        </Alert>
      )}
      {executor.isError && <Alert color="red">{describeError(executor.error)}</Alert>}
      <Offered session={session} refreshMs={refreshMs} />
      <Working session={session} refreshMs={refreshMs} verdicts={verdicts} />
      <Text size="sm" c="dimmed">
        Open tasks anyone may take are on the{" "}
        <Anchor component={Link} to="/" underline="always">
          board
        </Anchor>
        ; the tasks you posted are under{" "}
        <Anchor component={Link} to="/mine" underline="always">
          My tasks
        </Anchor>
        .
      </Text>
    </Stack>
  );
}

function Offered({ session, refreshMs }: { session: Session; refreshMs: number }) {
  const { chain } = usePostingChain();
  const queryClient = useQueryClient();
  const [message, setMessage] = useState<string | null>(null);
  const offered = useQuery({
    queryKey: ["me", "offered", session.address],
    queryFn: () => marketApi(session).offeredTasks({ limit: 100 }),
    refetchInterval: refreshMs,
  });
  const accept = useMutation({
    mutationFn: (hash: string) => marketApi(session).accept(hash),
    onSuccess: (answer) => {
      setMessage(
        answer.state === "assigned"
          ? `Accepted task #${answer.onChainTaskId}: it is yours to deliver.`
          : `Accepted task #${answer.onChainTaskId}: its assignment is on its way to the chain.`,
      );
      return queryClient.invalidateQueries({ queryKey: ["me"] });
    },
  });
  return (
    <Stack gap="xs">
      <Title order={3} size="h4">
        Offered to this agent
      </Title>
      {message && (
        <Alert color="green" withCloseButton closeButtonLabel="Dismiss" onClose={() => setMessage(null)}>
          {message}
        </Alert>
      )}
      {accept.isError && (
        <Alert color="orange" role="alert" title="Not accepted">
          {describeError(accept.error)}
        </Alert>
      )}
      {offered.isLoading && <Loader size="sm" role="status" aria-label="Loading the offered tasks" />}
      {offered.isError && <Alert color="red">{describeError(offered.error)}</Alert>}
      {offered.data?.tasks.length === 0 && <Text size="sm">No task is offered to this wallet now.</Text>}
      <SimpleGrid cols={{ base: 1, md: 2 }} data-testid="offered">
        {offered.data?.tasks.map((t) => (
          <Stack key={t.meta.taskHash} gap={4}>
            <TaskCard meta={t.meta} state={t.state} symbol={chain?.token?.symbol} decimals={chain?.token?.decimals} />
            <Group>
              <Button
                size="xs"
                aria-label={`Accept task #${t.meta.onChainTaskId}`}
                loading={accept.isPending && accept.variables === t.meta.taskHash}
                onClick={() => accept.mutate(t.meta.taskHash)}
              >
                Accept
              </Button>
            </Group>
          </Stack>
        ))}
      </SimpleGrid>
    </Stack>
  );
}

function Working({
  session,
  refreshMs,
  verdicts,
}: {
  session: Session;
  refreshMs: number;
  verdicts: Record<string, HeardVerdict>;
}) {
  const { chain } = usePostingChain();
  const working = useQuery({
    queryKey: ["me", "working", session.address],
    queryFn: () => marketApi(session).workingTasks({ limit: 100 }),
    refetchInterval: refreshMs,
  });
  return (
    <Stack gap="xs">
      <Title order={3} size="h4">
        Working on
      </Title>
      {working.isLoading && <Loader size="sm" role="status" aria-label="Loading your work" />}
      {working.isError && <Alert color="red">{describeError(working.error)}</Alert>}
      {working.data?.tasks.length === 0 && <Text size="sm">This wallet works on no task yet.</Text>}
      <SimpleGrid cols={{ base: 1, md: 2 }} data-testid="working">
        {working.data?.tasks.map((t) => (
          <WorkItem
            key={t.meta.taskHash}
            session={session}
            meta={t.meta}
            state={t.state}
            onChain={t.onChain}
            heard={verdicts[t.meta.taskHash]}
            symbol={chain?.token?.symbol}
            decimals={chain?.token?.decimals}
          />
        ))}
      </SimpleGrid>
    </Stack>
  );
}

/** A result as typed: JSON when it parses as JSON, else the text itself (a JSON string). */
export function parseResult(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function WorkItem({
  session,
  meta,
  state,
  onChain,
  heard,
  symbol,
  decimals,
}: {
  session: Session;
  meta: TaskMeta;
  state: TaskState;
  onChain: { failedVerdictAt: number; submissionAttempts: number; payout: string | null } | null;
  heard: HeardVerdict | undefined;
  symbol?: string;
  decimals?: number;
}) {
  const queryClient = useQueryClient();
  const [text, setText] = useState("");
  const submit = useMutation({
    mutationFn: async () => {
      const signer = await signerOnChain(session.provider, meta.chainId);
      return submitResult({ api: marketApi(session), signer }, meta.taskHash, parseResult(text.trim()));
    },
    onSuccess: () => {
      setText("");
      return queryClient.invalidateQueries({ queryKey: ["me"] });
    },
  });
  const failedBefore = (onChain?.failedVerdictAt ?? 0) > 0;
  // After a failed verdict the worker may deliver again (the escrow counts the attempts).
  const canDeliver = DELIVERABLE.has(state.status) || (state.status === "verified" && failedBefore);
  const criteria = meta.verificationCriteria;
  return (
    <Stack gap={4} data-testid={`work-${meta.taskHash}`}>
      <TaskCard meta={meta} state={state} symbol={symbol} decimals={decimals} />
      <Verdict
        state={state}
        failedBefore={failedBefore}
        heard={heard}
        payout={onChain?.payout ?? null}
        symbol={symbol}
        decimals={decimals}
      />
      {canDeliver && (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            submit.mutate();
          }}
        >
          <Stack gap={4}>
            <Textarea
              label={`Result for task #${meta.onChainTaskId}`}
              description={
                criteria
                  ? `JSON or text. Checked by: ${[
                      criteria.required_fields?.length ? `fields ${criteria.required_fields.join(", ")}` : null,
                      criteria.contains_keywords?.length ? `keywords ${criteria.contains_keywords.join(", ")}` : null,
                      criteria.min_length ? `at least ${criteria.min_length} characters` : null,
                      criteria.regex_pattern ? `the pattern /${criteria.regex_pattern}/` : null,
                    ]
                      .filter(Boolean)
                      .join("; ")}`
                  : "JSON or text"
              }
              autosize
              minRows={3}
              required
              value={text}
              onChange={(event) => setText(event.currentTarget.value)}
            />
            <Group gap="xs">
              <Button type="submit" size="xs" loading={submit.isPending} disabled={!text.trim()}>
                Submit and sign
              </Button>
              <Text size="xs" c="dimmed">
                The result is stored by the service; the wallet signs submitEvidence of its hash once the page has
                checked the transaction.
              </Text>
            </Group>
          </Stack>
        </form>
      )}
      {submit.isSuccess && (
        <Text size="sm" role="status" data-testid="delivered">
          Delivered (attempt {submit.data.attempt}): evidence {submit.data.evidenceHash.slice(0, 10)}… in transaction{" "}
          <Code>{submit.data.txHash.slice(0, 10)}…</Code>
        </Text>
      )}
      {submit.isError && (
        <Alert color="orange" role="alert" title="Not delivered">
          {describeError(submit.error)}
        </Alert>
      )}
    </Stack>
  );
}

/** The verdict on the latest delivery, in words: waiting, failed (may deliver again), passed and paid. */
function Verdict({
  state,
  failedBefore,
  heard,
  payout,
  symbol,
  decimals,
}: {
  state: TaskState;
  failedBefore: boolean;
  heard: HeardVerdict | undefined;
  payout: string | null;
  symbol?: string;
  decimals?: number;
}) {
  const status = state.status;
  let label = "to deliver";
  let color = "gray";
  let text = "Accepted: deliver the result.";
  if (status === "completed" || heard?.outcome === "paid") {
    [label, color] = ["passed", "teal"];
    text = payout ? `Passed: paid ${formatAmount(payout, decimals, symbol)}.` : "Passed: paid.";
  } else if (status === "verified" && failedBefore) {
    [label, color] = ["failed", "orange"];
    text = "Failed verification: deliver a corrected result, or dispute.";
  } else if (status === "submitted" || status === "verifying" || status === "verified") {
    [label, color] = heard?.passed ? ["passed", "teal"] : ["waiting", "blue"];
    text = heard?.passed ? "Passed: payment on its way." : "Delivered: waiting for the verdict.";
  } else if (status === "disputed") {
    [label, color] = ["disputed", "red"];
    text = "Disputed: the escrow admin rules.";
  } else if (status === "cancelled" || status === "expired") {
    label = "ended";
    text = "Ended without payment (cancelled or expired).";
  }
  return (
    <Group gap="xs" wrap="nowrap" align="flex-start">
      <Badge color={color} variant="light" style={{ flexShrink: 0 }}>
        {label}
      </Badge>
      <Text size="sm" data-testid="verdict">
        {text}
      </Text>
    </Group>
  );
}
