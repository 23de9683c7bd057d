/**
 * Hosted agents, for their owner: the agents the service runs for the signed-in wallet (status, desired state,
 * restarts, last error, earnings, its log followed live), their actions (start, stop, pause, resume, restart; a
 * refusal shows the API's message and code), skills installed from the catalog (secret fields write-only) and
 * uninstalled, and deleting one after a confirmation that says its key is erased.
 * Creating one: the deploy fee's terms, paid from the wallet through the SDK's `payDeployFee` (its checks: exactly
 * the fee, to the factory, from this wallet), then the slug, the name, a skill from the catalog with the secret
 * fields it needs (write-only: sent once, never shown back), extra capabilities and the settlement chains it takes
 * tasks on (checkboxes of the settlement record's chains, all ticked by default). Each card shows the agent's
 * capabilities and chains, which the owner changes there. Exporting an agent's key: the owner's wallet signs the
 * service's challenge (EIP-4361, personal_sign) and the key is shown once, with a warning. The log is followed as
 * Server-Sent Events (the SDK's `followAgentLogs`, resuming after the last line shown); the agents' status refreshes
 * every 5 s while shown.
 */
import { useEffect, useState } from "react";
import {
  Alert,
  Badge,
  Button,
  Card,
  Checkbox,
  Code,
  Group,
  Loader,
  PasswordInput,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { BrowserProvider, hexlify, toUtf8Bytes } from "ethers";
import {
  followAgentLogs,
  payDeployFee,
  type AgentLogLine,
  type HostedAgent,
  type HostedAgentAction,
  type SkillCatalog,
} from "../../../client/sdk/index";
import { describeError, marketApi } from "../api";
import { formatAmount, formatIso, shortAddress } from "../format";
import { usePostingChain, useSettlement } from "../hooks";
import { useSession, type Session } from "../session";
import { SignInPanel } from "../components/SignIn";
import { ShownOnce } from "../components/ShownOnce";

export const HOSTED_REFRESH_MS = 5000;
/** Log lines kept on a card (the newest). */
const LOG_LINES_SHOWN = 8;
const ACTIONS: { action: HostedAgentAction; label: string }[] = [
  { action: "start", label: "Start" },
  { action: "stop", label: "Stop" },
  { action: "pause", label: "Pause" },
  { action: "resume", label: "Resume" },
  { action: "restart", label: "Restart" },
];
const STATUS_COLOR: Record<string, string> = { running: "teal", paused: "yellow", crashed: "red", starting: "blue" };

export function HostedPage() {
  const { session } = useSession();
  if (!session) return <SignInPanel reason="Sign in with the wallet that owns the agents (or will pay the fee)." />;
  return (
    <Stack>
      <Title order={2}>Hosted agents</Title>
      <Text size="sm" c="dimmed">
        Agents the marketplace runs for you: each has its own wallet, takes the tasks its skills can do and is paid
        there.
      </Text>
      <AgentList session={session} />
      <CreateAgent session={session} />
    </Stack>
  );
}

function AgentList({ session }: { session: Session }) {
  const agents = useQuery({
    queryKey: ["me", "hosted", session.address],
    queryFn: () => marketApi(session).hostedAgents(),
    refetchInterval: HOSTED_REFRESH_MS,
  });
  if (agents.isLoading) return <Loader role="status" aria-label="Loading your agents" />;
  if (agents.isError) return <Alert color="red">{describeError(agents.error)}</Alert>;
  const list = agents.data!.agents.filter((a) => a.status !== "deleted");
  if (list.length === 0) return <Text>You have no hosted agent yet: create one below.</Text>;
  return (
    <SimpleGrid cols={{ base: 1, lg: 2 }}>
      {list.map((agent) => (
        <AgentCard key={agent.id} session={session} agent={agent} />
      ))}
    </SimpleGrid>
  );
}

function AgentCard({ session, agent }: { session: Session; agent: HostedAgent }) {
  const queryClient = useQueryClient();
  const { chain } = usePostingChain();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["me", "hosted"] });
  const act = useMutation({
    mutationFn: (action: HostedAgentAction) => marketApi(session).hostedAgentAction(agent.id, action),
    onSuccess: (view, action) => {
      setMessage(`${action}: desired state ${view.desiredState}, now ${view.status}.`);
      return refresh();
    },
  });
  const remove = useMutation({
    mutationFn: () => marketApi(session).deleteHostedAgent(agent.id),
    onSuccess: () => refresh(),
  });
  const [exported, setExported] = useState<string | null>(null);
  const exportKey = useMutation({
    mutationFn: async () => {
      const api = marketApi(session);
      const challenge = await api.keyExportChallenge(agent.id);
      const signature = (await session.provider.request({
        method: "personal_sign",
        params: [hexlify(toUtf8Bytes(challenge.message)), session.address],
      })) as string;
      return api.exportAgentKey(agent.id, { message: challenge.message, signature });
    },
    onSuccess: (key) => setExported(key.privateKey),
  });
  const name = agent.slug ?? agent.id;
  return (
    <Card withBorder data-testid={`hosted-${name}`}>
      <Stack gap="xs">
        <Group justify="space-between" wrap="nowrap">
          <Title order={3} size="h4">
            {agent.name}
          </Title>
          <Badge color={STATUS_COLOR[agent.status] ?? "gray"} variant="light" data-testid="hosted-status">
            {agent.status}
          </Badge>
        </Group>
        <Table aria-label={`Agent ${name}`} variant="vertical" withTableBorder={false}>
          <Table.Tbody>
            <Table.Tr>
              <Table.Th w={130}>Slug</Table.Th>
              <Table.Td>
                <Code>{name}</Code>
              </Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Wallet</Table.Th>
              <Table.Td title={agent.wallet}>{shortAddress(agent.wallet)}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Desired state</Table.Th>
              <Table.Td data-testid="hosted-desired">{agent.desiredState}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Skills</Table.Th>
              <Table.Td>
                <InstalledSkills session={session} agent={agent} name={name} />
              </Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Capabilities</Table.Th>
              <Table.Td data-testid="hosted-capabilities">{agent.capabilities.join(", ") || "none"}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Chains</Table.Th>
              <Table.Td>
                <AgentChains session={session} agent={agent} name={name} />
              </Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Restarts</Table.Th>
              <Table.Td>{agent.restarts}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Last error</Table.Th>
              <Table.Td>{agent.lastError ?? "none"}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Earnings</Table.Th>
              <Table.Td>
                {formatAmount(agent.earnings.amount_raw, chain?.token?.decimals, chain?.token?.symbol)} from{" "}
                {agent.earnings.paidTasks} paid task(s)
              </Table.Td>
            </Table.Tr>
          </Table.Tbody>
        </Table>
        <Group gap="xs">
          {ACTIONS.map(({ action, label }) => (
            <Button
              key={action}
              size="xs"
              variant="default"
              aria-label={`${label} ${name}`}
              loading={act.isPending && act.variables === action}
              onClick={() => act.mutate(action)}
            >
              {label}
            </Button>
          ))}
          <Button
            size="xs"
            variant="light"
            aria-label={`Export key of ${name}`}
            loading={exportKey.isPending}
            onClick={() => exportKey.mutate()}
          >
            Export key
          </Button>
          {!confirmDelete && (
            <Button size="xs" color="red" variant="light" onClick={() => setConfirmDelete(true)}>
              Delete
            </Button>
          )}
        </Group>
        {exported && (
          <ShownOnce
            title="The agent's private key: shown once. Whoever holds it controls the agent's wallet and its earnings"
            value={exported}
            copyLabel="Copy key"
            testId="exported-key"
            onDismiss={() => setExported(null)}
          />
        )}
        {exportKey.isError && (
          <Alert color="orange" role="alert" title="Not exported">
            {describeError(exportKey.error)}
          </Alert>
        )}
        {confirmDelete && (
          <div role="alertdialog" aria-label={`Confirm deleting ${name}`}>
            <Alert color="red" title={`Delete ${name}?`}>
              <Stack gap="xs">
                <Text size="sm">
                  Its wallet&apos;s private key is erased for good: export it first if the wallet holds anything. Only a
                  stopped agent can be deleted.
                </Text>
                <Group gap="xs">
                  <Button size="xs" color="red" loading={remove.isPending} onClick={() => remove.mutate()}>
                    Yes, delete and erase the key
                  </Button>
                  <Button size="xs" variant="default" onClick={() => setConfirmDelete(false)}>
                    Keep it
                  </Button>
                </Group>
              </Stack>
            </Alert>
          </div>
        )}
        {message && !act.isError && (
          <Text size="sm" role="status">
            {message}
          </Text>
        )}
        {act.isError && (
          <Alert color="orange" role="alert" title="Refused">
            {describeError(act.error)}
          </Alert>
        )}
        {remove.isError && (
          <Alert color="orange" role="alert" title="Not deleted">
            {describeError(remove.error)}
          </Alert>
        )}
        <InstallSkill session={session} agent={agent} name={name} />
        <AgentLog session={session} agent={agent} />
      </Stack>
    </Card>
  );
}

/**
 * The chains the agent takes tasks on, and changing them (PATCH /agents/{agent}: a running agent restarts with them;
 * the marketplace refuses it tasks on the others at once). The choices are the settlement record's chains.
 */
function AgentChains({ session, agent, name }: { session: Session; agent: HostedAgent; name: string }) {
  const queryClient = useQueryClient();
  const settlement = useSettlement();
  const [editing, setEditing] = useState<string[] | null>(null);
  const save = useMutation({
    mutationFn: (chains: string[]) => marketApi(session).updateHostedAgent(agent.id, { chains }),
    onSuccess: () => {
      setEditing(null);
      return queryClient.invalidateQueries({ queryKey: ["me", "hosted"] });
    },
  });
  if (editing === null) {
    return (
      <Group gap="xs" wrap="nowrap">
        <span data-testid="hosted-chains">{agent.chains.join(", ")}</span>
        <Button
          size="compact-xs"
          variant="subtle"
          aria-label={`Change the chains of ${name}`}
          onClick={() => setEditing(agent.chains)}
        >
          Change
        </Button>
      </Group>
    );
  }
  return (
    <form
      aria-label={`Chains of ${name}`}
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate(editing);
      }}
    >
      <Stack gap={4}>
        <Checkbox.Group
          aria-label={`Chains ${name} takes tasks on`}
          value={editing}
          onChange={setEditing}
          error={editing.length === 0 ? "Choose at least one chain" : undefined}
        >
          <Group gap="xs">
            {(settlement.data?.chains ?? []).map((c) => (
              <Checkbox key={c.chain} value={c.chain} label={c.chain} />
            ))}
          </Group>
        </Checkbox.Group>
        <Group gap="xs">
          <Button type="submit" size="compact-xs" disabled={editing.length === 0} loading={save.isPending}>
            Save chains
          </Button>
          <Button size="compact-xs" variant="default" onClick={() => setEditing(null)}>
            Cancel
          </Button>
        </Group>
        {save.isError && (
          <Alert color="orange" role="alert" title="Not changed">
            {describeError(save.error)}
          </Alert>
        )}
      </Stack>
    </form>
  );
}

type CatalogSkill = SkillCatalog["skills"][number];

/** The skill's configuration from the form's text fields, typed as the catalog says (blank fields left out). */
function configOf(skill: CatalogSkill | undefined, text: Record<string, string>): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const field of skill?.config ?? []) {
    const value = text[field.name]?.trim();
    if (!value) continue;
    if (field.type === "string[]") {
      config[field.name] = value
        .split(",")
        .map((v) => v.trim())
        .filter(Boolean);
    } else if (field.type === "integer") config[field.name] = Number(value);
    else config[field.name] = value;
  }
  return config;
}

/** A catalog skill's settings (typed as the catalog says) and secret fields (write-only: password inputs). */
function SkillFields(props: {
  skill: CatalogSkill | undefined;
  config: Record<string, string>;
  secrets: Record<string, string>;
  onConfig: (name: string, value: string) => void;
  onSecret: (name: string, value: string) => void;
}) {
  const { skill } = props;
  return (
    <>
      {skill?.config
        .filter((field) => field.type !== "record<string,string>")
        .map((field) => (
          <TextInput
            key={field.name}
            label={`Setting: ${field.name}`}
            description={`${field.description}${field.type === "string[]" ? " (comma-separated)" : ""}`}
            required={field.required}
            value={props.config[field.name] ?? ""}
            onChange={(e) => props.onConfig(field.name, e.currentTarget.value)}
          />
        ))}
      {skill?.requiredSecrets.map((secret) => (
        <PasswordInput
          key={secret}
          label={`Secret: ${secret}`}
          description="Stored encrypted for the agent; never shown again, here or anywhere"
          required
          autoComplete="off"
          value={props.secrets[secret] ?? ""}
          onChange={(e) => props.onSecret(secret, e.currentTarget.value)}
        />
      ))}
    </>
  );
}

/** The skill as the API installs it: id, typed settings (when any) and secrets (when any). */
function skillInstall(
  skill: string,
  chosen: CatalogSkill | undefined,
  config: Record<string, string>,
  secrets: Record<string, string>,
) {
  const typed = configOf(chosen, config);
  return {
    skill,
    ...(Object.keys(typed).length ? { config: typed } : {}),
    ...(Object.keys(secrets).length ? { secrets } : {}),
  };
}

/** The agent's installed skills, each with Uninstall (its secrets go with it; a running agent restarts without it). */
function InstalledSkills({ session, agent, name }: { session: Session; agent: HostedAgent; name: string }) {
  const queryClient = useQueryClient();
  const uninstall = useMutation({
    mutationFn: (skill: string) => marketApi(session).uninstallSkill(agent.id, skill),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["me", "hosted"] }),
  });
  if (agent.skills.length === 0) return <>none</>;
  return (
    <Stack gap={4}>
      {agent.skills.map((s) => (
        <Group key={s.skill} gap="xs" wrap="nowrap" data-testid={`skill-${s.skill}`}>
          <Code>{s.skill}</Code>
          <Button
            size="compact-xs"
            variant="subtle"
            color="red"
            aria-label={`Uninstall ${s.skill} from ${name}`}
            loading={uninstall.isPending && uninstall.variables === s.skill}
            onClick={() => uninstall.mutate(s.skill)}
          >
            Uninstall
          </Button>
        </Group>
      ))}
      {uninstall.isError && (
        <Alert color="orange" role="alert" title="Not uninstalled">
          {describeError(uninstall.error)}
        </Alert>
      )}
    </Stack>
  );
}

/** Installing a catalog skill on an existing agent: its settings and secrets, sent once (the page keeps no copy). */
function InstallSkill({ session, agent, name }: { session: Session; agent: HostedAgent; name: string }) {
  const queryClient = useQueryClient();
  const catalog = useQuery({ queryKey: ["skills"], queryFn: () => marketApi().skillCatalog(), staleTime: Infinity });
  const [open, setOpen] = useState(false);
  const [skill, setSkill] = useState<string | null>(null);
  const [config, setConfig] = useState<Record<string, string>>({});
  const [secrets, setSecrets] = useState<Record<string, string>>({});
  const [done, setDone] = useState<string | null>(null);
  const chosen = catalog.data?.skills.find((s) => s.id === skill);
  const installed = new Set(agent.skills.map((s) => s.skill));
  const reset = () => {
    setSkill(null);
    setConfig({});
    setSecrets({});
  };
  const install = useMutation({
    mutationFn: () => marketApi(session).installSkill(agent.id, skillInstall(skill!, chosen, config, secrets)),
    onSuccess: (_view) => {
      setDone(skill);
      reset();
      setOpen(false);
      return queryClient.invalidateQueries({ queryKey: ["me", "hosted"] });
    },
  });
  if (!open) {
    return (
      <Group gap="xs">
        <Button size="xs" variant="default" aria-label={`Install a skill on ${name}`} onClick={() => setOpen(true)}>
          Install a skill
        </Button>
        {done && (
          <Text size="sm" role="status">
            Installed {done}; a running agent restarts with it.
          </Text>
        )}
      </Group>
    );
  }
  return (
    <form
      aria-label={`Install a skill on ${name}`}
      onSubmit={(event) => {
        event.preventDefault();
        install.mutate();
      }}
    >
      <Stack gap="xs">
        <Select
          label="Skill to install"
          description={chosen?.description ?? "From the skill catalog"}
          data={(catalog.data?.skills ?? [])
            .filter((s) => !installed.has(s.id))
            .map((s) => ({ value: s.id, label: `${s.title} (${s.id})` }))}
          value={skill}
          onChange={(value) => {
            setSkill(value);
            setConfig({});
            setSecrets({});
          }}
        />
        <SkillFields
          skill={chosen}
          config={config}
          secrets={secrets}
          onConfig={(field, value) => setConfig((c) => ({ ...c, [field]: value }))}
          onSecret={(field, value) => setSecrets((c) => ({ ...c, [field]: value }))}
        />
        <Group gap="xs">
          <Button type="submit" size="xs" disabled={!skill} loading={install.isPending}>
            Install
          </Button>
          <Button
            size="xs"
            variant="default"
            onClick={() => {
              reset();
              setOpen(false);
            }}
          >
            Cancel
          </Button>
        </Group>
        {install.isError && (
          <Alert color="orange" role="alert" title="Not installed">
            {describeError(install.error)}
          </Alert>
        )}
      </Stack>
    </form>
  );
}

/**
 * The agent's log, followed live: the lines the agent list carried, then each new line as the host writes it (SSE,
 * resumed after the last line shown when the connection drops).
 */
function AgentLog({ session, agent }: { session: Session; agent: HostedAgent }) {
  const [lines, setLines] = useState<AgentLogLine[]>(() => agent.recentLogs.slice(-LOG_LINES_SHOWN));
  const [live, setLive] = useState(false);
  const agentId = agent.id;
  const apiKey = session.apiKey;
  // The stream starts after the newest line the page had when the card appeared.
  const [startAfter] = useState(() => agent.recentLogs.at(-1)?.id);
  useEffect(() => {
    const subscription = followAgentLogs(
      marketApi({ apiKey }),
      agentId,
      (line) =>
        setLines((shown) => (shown.some((l) => l.id === line.id) ? shown : [...shown, line].slice(-LOG_LINES_SHOWN))),
      {
        ...(startAfter !== undefined ? { lastEventId: String(startAfter) } : {}),
        onOpen: () => setLive(true),
        onError: (_error, retryInMs) => {
          if (retryInMs > 0) setLive(false);
        },
      },
    );
    subscription.done.catch(() => setLive(false));
    return () => {
      void subscription.close();
      setLive(false);
    };
  }, [agentId, apiKey, startAfter]);
  return (
    <>
      <Group gap="xs" justify="space-between">
        <Title order={4} size="h6">
          Log
        </Title>
        <Text size="xs" c="dimmed" data-testid="log-mode">
          {live ? "following live" : "connecting…"}
        </Text>
      </Group>
      <Stack gap={2} data-testid="hosted-log" aria-live="polite">
        {lines.length === 0 && (
          <Text size="xs" c="dimmed">
            No log line yet.
          </Text>
        )}
        {lines.map((line) => (
          <Text key={line.id} size="xs" ff="monospace" style={{ overflowWrap: "anywhere" }}>
            {formatIso(line.at)} {line.level} {line.message}
          </Text>
        ))}
      </Stack>
    </>
  );
}

function CreateAgent({ session }: { session: Session }) {
  const queryClient = useQueryClient();
  const { chain } = usePostingChain();
  const fee = useQuery({
    queryKey: ["me", "deploy-fee", session.address],
    queryFn: () => marketApi(session).deployFee(),
  });
  const catalog = useQuery({ queryKey: ["skills"], queryFn: () => marketApi().skillCatalog(), staleTime: Infinity });
  const [slug, setSlug] = useState("");
  const [name, setName] = useState("");
  const [skill, setSkill] = useState<string | null>(null);
  const [secrets, setSecrets] = useState<Record<string, string>>({});
  const [config, setConfig] = useState<Record<string, string>>({});
  const [capabilities, setCapabilities] = useState("");
  const settlement = useSettlement();
  const configuredChains = (settlement.data?.chains ?? []).map((c) => c.chain);
  // Every configured chain until the owner unticks one (the API's default too).
  const [chains, setChains] = useState<string[] | null>(null);
  const chosenChains = chains ?? configuredChains;
  const noChain = settlement.data !== undefined && chosenChains.length === 0;
  const [created, setCreated] = useState<string | null>(null);
  const chosen = catalog.data?.skills.find((s) => s.id === skill);

  const pay = useMutation({
    mutationFn: async () => {
      const signer = await new BrowserProvider(session.provider).getSigner();
      return payDeployFee({ api: marketApi(session), signer });
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["me", "deploy-fee"] }),
  });
  const create = useMutation({
    mutationFn: () =>
      marketApi(session).createHostedAgent({
        slug: slug.trim(),
        name: name.trim(),
        capabilities: capabilities
          .split(",")
          .map((c) => c.trim())
          .filter(Boolean),
        ...(chains ? { chains } : {}),
        skills: skill ? [skillInstall(skill, chosen, config, secrets)] : [],
      }),
    onSuccess: (agent) => {
      setCreated(agent.slug ?? agent.id);
      // The secrets were sent once; the page keeps no copy.
      setSecrets({});
      setConfig({});
      setSlug("");
      setName("");
      setSkill(null);
      setCapabilities("");
      setChains(null);
      void queryClient.invalidateQueries({ queryKey: ["me"] });
    },
  });
  const credits = fee.data?.credits ?? 0;
  const needsFee = Boolean(fee.data?.required) && credits === 0;

  return (
    <Card withBorder>
      <Stack>
        <Title order={3}>Create a hosted agent</Title>
        {fee.isError && <Alert color="red">{describeError(fee.error)}</Alert>}
        {fee.data && (
          <Text size="sm" data-testid="deploy-fee">
            {fee.data.required
              ? `Each agent costs a deploy fee of ${formatAmount(fee.data.amount_raw, chain?.token?.decimals, chain?.token?.symbol)}, paid to the marketplace's factory. You have ${credits} unspent deploy credit(s).`
              : "This marketplace charges no deploy fee."}
          </Text>
        )}
        {needsFee && (
          <Group>
            <Button loading={pay.isPending} onClick={() => pay.mutate()}>
              Pay the deploy fee
            </Button>
            <Text size="xs" c="dimmed">
              The wallet approves exactly the fee and pays it; the page checks both transactions before signing.
            </Text>
          </Group>
        )}
        {pay.isError && (
          <Alert color="red" role="alert">
            {describeError(pay.error)}
          </Alert>
        )}
        <form
          onSubmit={(event) => {
            event.preventDefault();
            create.mutate();
          }}
        >
          <Stack>
            <Group grow wrap="wrap" align="flex-start">
              <TextInput
                label="Slug"
                description="Its name in URLs: a-z, 0-9 and dashes"
                required
                value={slug}
                onChange={(e) => setSlug(e.currentTarget.value)}
              />
              <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
            </Group>
            <Select
              label="Skill"
              description={chosen?.description ?? "What the agent does (from the skill catalog)"}
              data={(catalog.data?.skills ?? []).map((s) => ({ value: s.id, label: `${s.title} (${s.id})` }))}
              value={skill}
              onChange={(value) => {
                setSkill(value);
                setSecrets({});
                setConfig({});
              }}
              clearable
            />
            <SkillFields
              skill={chosen}
              config={config}
              secrets={secrets}
              onConfig={(field, value) => setConfig((c) => ({ ...c, [field]: value }))}
              onSecret={(field, value) => setSecrets((c) => ({ ...c, [field]: value }))}
            />
            <TextInput
              label="Extra capabilities"
              description="Capabilities beyond its skill's, comma-separated (tasks asking for them are offered to it)"
              value={capabilities}
              onChange={(e) => setCapabilities(e.currentTarget.value)}
            />
            <Checkbox.Group
              label="Chains"
              description="The settlement chains it takes tasks on"
              value={chosenChains}
              onChange={setChains}
              error={noChain ? "Choose at least one chain" : undefined}
            >
              <Group mt="xs">
                {configuredChains.map((c) => (
                  <Checkbox key={c} value={c} label={c} />
                ))}
              </Group>
            </Checkbox.Group>
            <Group>
              <Button type="submit" loading={create.isPending} disabled={needsFee || noChain}>
                Create the agent
              </Button>
              {needsFee && (
                <Text size="xs" c="dimmed">
                  Pay the deploy fee first.
                </Text>
              )}
            </Group>
          </Stack>
        </form>
        {create.isError && (
          <Alert color="red" role="alert">
            {describeError(create.error)}
          </Alert>
        )}
        {created && (
          <Alert color="green" withCloseButton closeButtonLabel="Dismiss" onClose={() => setCreated(null)}>
            Agent {created} created, stopped. Send its wallet a little gas, then start it.
          </Alert>
        )}
      </Stack>
    </Card>
  );
}
