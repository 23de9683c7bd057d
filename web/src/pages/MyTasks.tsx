/**
 * My tasks. As poster: the posted tasks with their state, and the actions the state allows (pass or fail a manual
 * task's submission, cancel, reclaim after the deadline, dispute). As agent: tasks offered to me, and the tasks I work
 * on (GET /api/v1/a2a/tasks/working). Transactions go through the SDK's `sendTaskOperation`, which checks each one
 * (from this wallet, to the settlement escrow, exactly the call) before the wallet signs it. The wallet's event stream
 * refreshes the lists as events arrive (every event concerns one of these lists); polling is only the fallback, every
 * 60 s while the stream is up, every 10 s when it is not, so a page left open stays well within the 100 requests a
 * minute per IP.
 */
import { useState } from "react";
import { Alert, Anchor, Button, Card, Group, Loader, SimpleGrid, Stack, Tabs, Text, Title } from "@mantine/core";
import { Link } from "react-router";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { sendTaskOperation } from "../../../client/sdk/index";
import { describeError, marketApi } from "../api";
import { usePostingChain } from "../hooks";
import { useSession, type Session } from "../session";
import { signerOnChain } from "../wallet";
import { SignInPanel } from "../components/SignIn";
import { TaskCard } from "../components/TaskCard";
import { useMarketEvents } from "../events";
/** Fallback polling: while the event stream is up, and when it is not. */
export const MY_TASKS_REFRESH_LIVE_MS = 60_000;
export const MY_TASKS_REFRESH_MS = 10_000;
const [FUNDED, ASSIGNED, SUBMITTED] = [0, 1, 2];

export function MyTasksPage() {
  const { session } = useSession();
  if (!session) return <SignInPanel reason="Sign in to see the tasks you posted and the tasks you work on." />;
  return <SignedInTasks session={session} />;
}

function SignedInTasks({ session }: { session: Session }) {
  const queryClient = useQueryClient();
  const live = useMarketEvents(() => void queryClient.invalidateQueries({ queryKey: ["me"] }));
  const refreshMs = live ? MY_TASKS_REFRESH_LIVE_MS : MY_TASKS_REFRESH_MS;
  return (
    <Stack>
      <Title order={2}>My tasks</Title>
      <Text size="sm" c="dimmed">
        <span data-testid="refresh-mode">
          {live ? "live updates" : `refreshed every ${MY_TASKS_REFRESH_MS / 1000} s`}
        </span>
      </Text>
      <Tabs defaultValue="posted" keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="posted">As poster</Tabs.Tab>
          <Tabs.Tab value="agent">As agent</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="posted" pt="md">
          <PostedTasks session={session} refreshMs={refreshMs} />
        </Tabs.Panel>
        <Tabs.Panel value="agent" pt="md">
          <AgentTasks session={session} refreshMs={refreshMs} />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}

function PostedTasks({ session, refreshMs }: { session: Session; refreshMs: number }) {
  const { chain } = usePostingChain();
  const queryClient = useQueryClient();
  const [message, setMessage] = useState<string | null>(null);
  const posted = useQuery({
    queryKey: ["me", "posted", session.address],
    queryFn: () => marketApi(session).postedTasks({ limit: 100 }),
    refetchInterval: refreshMs,
  });
  const action = useMutation({
    mutationFn: async ({
      hash,
      chainId,
      kind,
    }: {
      hash: string;
      /** The task's chain: the wallet signs there. */
      chainId: number | null;
      kind: "finalize" | "decline" | "cancel" | "reclaim" | "dispute";
    }) => {
      const api = marketApi(session);
      if (kind === "finalize") return api.finalize(hash).then(() => "Passed: the worker is paid.");
      if (kind === "decline")
        return api
          .decline(hash, { reason: "declined in the web app" })
          .then(() => "Failed verdict recorded: the worker may resubmit or appeal.");
      const signer = await signerOnChain(session.provider, chainId);
      const done = await sendTaskOperation({ api, signer }, kind, hash);
      return kind === "cancel"
        ? "Cancelled: the reward is refunded."
        : kind === "dispute"
          ? "Dispute raised."
          : `Reclaimed (${done.outcome}).`;
    },
    onSuccess: (text) => {
      setMessage(text);
      void queryClient.invalidateQueries({ queryKey: ["me", "posted"] });
    },
  });
  if (posted.isLoading) return <Loader role="status" aria-label="Loading your tasks" />;
  if (posted.isError) return <Alert color="red">{describeError(posted.error)}</Alert>;
  const tasks = posted.data!.tasks;
  return (
    <Stack>
      {message && (
        <Alert color="green" withCloseButton closeButtonLabel="Dismiss" onClose={() => setMessage(null)}>
          {message}
        </Alert>
      )}
      {action.isError && <Alert color="red">{describeError(action.error)}</Alert>}
      {tasks.length === 0 && (
        <Text>
          You have posted no task yet.{" "}
          <Anchor component={Link} to="/post" underline="always">
            Post a task
          </Anchor>
        </Text>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        {tasks.map((t) => {
          const status = t.state.status;
          // The escrow's status decides the recourse: a funded task is cancelled (expired or not), taken work is
          // reclaimed after the deadline (the server refuses earlier, saying when).
          const onChain = t.state.onChainStatus;
          const run = (kind: Parameters<typeof action.mutate>[0]["kind"]) =>
            action.mutate({ hash: t.meta.taskHash, chainId: t.meta.chainId, kind });
          const busy = (kind: string) =>
            action.isPending && action.variables?.hash === t.meta.taskHash && action.variables.kind === kind;
          return (
            <Stack key={t.meta.taskHash} gap={4} data-testid={`posted-${t.meta.taskHash}`}>
              <TaskCard meta={t.meta} state={t.state} symbol={chain?.token?.symbol} decimals={chain?.token?.decimals} />
              <Group gap="xs">
                {t.meta.verificationMode === "manual" && status === "submitted" && (
                  <>
                    <Button size="xs" color="teal.9" loading={busy("finalize")} onClick={() => run("finalize")}>
                      Pass and pay
                    </Button>
                    <Button
                      size="xs"
                      color="orange"
                      variant="light"
                      loading={busy("decline")}
                      onClick={() => run("decline")}
                    >
                      Fail
                    </Button>
                  </>
                )}
                {onChain === FUNDED && status !== "assigning" && (
                  <Button size="xs" variant="default" loading={busy("cancel")} onClick={() => run("cancel")}>
                    Cancel and refund
                  </Button>
                )}
                {(onChain === ASSIGNED || onChain === SUBMITTED) && (
                  <Button size="xs" variant="default" loading={busy("reclaim")} onClick={() => run("reclaim")}>
                    Reclaim after the deadline
                  </Button>
                )}
                {["submitted", "verified"].includes(status) && (
                  <Button
                    size="xs"
                    color="red"
                    variant="subtle"
                    loading={busy("dispute")}
                    onClick={() => run("dispute")}
                  >
                    Dispute
                  </Button>
                )}
              </Group>
            </Stack>
          );
        })}
      </SimpleGrid>
    </Stack>
  );
}

function AgentTasks({ session, refreshMs }: { session: Session; refreshMs: number }) {
  const { chain } = usePostingChain();
  const offered = useQuery({
    queryKey: ["me", "offered", session.address],
    queryFn: () => marketApi(session).offeredTasks({ limit: 100 }),
    refetchInterval: refreshMs,
  });
  const working = useQuery({
    queryKey: ["me", "working", session.address],
    refetchInterval: refreshMs,
    queryFn: () => marketApi(session).workingTasks({ limit: 100 }),
  });
  return (
    <Stack>
      <Title order={3} size="h4">
        Offered to me
      </Title>
      {offered.isError && <Alert color="red">{describeError(offered.error)}</Alert>}
      {offered.data?.tasks.length === 0 && <Text size="sm">No task is pinned to your wallet.</Text>}
      <SimpleGrid cols={{ base: 1, md: 2 }} data-testid="offered">
        {offered.data?.tasks.map((t) => (
          <TaskCard
            key={t.meta.taskHash}
            meta={t.meta}
            state={t.state}
            symbol={chain?.token?.symbol}
            decimals={chain?.token?.decimals}
          />
        ))}
      </SimpleGrid>
      <Title order={3} size="h4">
        Working on
      </Title>
      {working.isLoading && <Loader size="sm" role="status" aria-label="Loading" />}
      {working.isError && <Alert color="red">{describeError(working.error)}</Alert>}
      {working.data?.tasks.length === 0 && <Text size="sm">You have not been assigned a task.</Text>}
      <SimpleGrid cols={{ base: 1, md: 2 }} data-testid="working">
        {working.data?.tasks.map((t) => (
          <Card key={t.meta.taskHash} p={0} withBorder={false}>
            <TaskCard meta={t.meta} state={t.state} symbol={chain?.token?.symbol} decimals={chain?.token?.decimals} />
          </Card>
        ))}
      </SimpleGrid>
    </Stack>
  );
}
