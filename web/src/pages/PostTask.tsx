/**
 * Post a task: brief, reward, deadline, verification mode and criteria (validated as typed), then upload, build, the
 * careful client's checks (shown), approve exactly the reward, fund from the signed-in wallet, and list. A public
 * brief is uploaded as written; a private one is encrypted in the page and its key wrapped to the chosen agents.
 * Opened as `/post?service={id}` (the Agents page's "Rent"), the task is pinned to that service's agent: listed with
 * targetExecutor and serviceId, paying at least the service's price in its token.
 */
import { useState } from "react";
import {
  Alert,
  Anchor,
  Button,
  Card,
  Group,
  List,
  MultiSelect,
  NumberInput,
  SegmentedControl,
  Select,
  Stack,
  Stepper,
  TagsInput,
  Text,
  TextInput,
  Textarea,
  ThemeIcon,
  Title,
} from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { BrowserProvider, formatUnits, parseUnits, toBigInt, toQuantity } from "ethers";
import { Link, useLocation, useSearchParams } from "react-router";
import { postTask } from "../../../client/sdk/index";
import { describeError, marketApi } from "../api";
import { useSettlement } from "../hooks";
import { useSession, type Session } from "../session";
import { SignInPanel } from "../components/SignIn";
import { formatAmount, shortAddress } from "../format";
import type { ServiceView } from "../types";

const BRIEF_MAX = 4000;
const DURATIONS = [
  { value: "3600", label: "1 hour" },
  { value: "21600", label: "6 hours" },
  { value: "86400", label: "1 day" },
  { value: "259200", label: "3 days" },
  { value: "604800", label: "7 days" },
];
const STEPS = [
  "Upload the brief",
  "Build the transaction",
  "Check it",
  "Approve the reward",
  "Fund the task",
  "List it",
];

interface Criteria {
  min_length?: number;
  contains_keywords?: string[];
  required_fields?: string[];
  regex_pattern?: string;
}
interface Check {
  label: string;
  ok: boolean;
}
type Settlement = NonNullable<ReturnType<typeof useSettlement>["data"]>["chains"][number];

/** Which of the four checks (in the order shown) an SDK refusal is. */
const CHECK_OF_CODE: Record<string, number> = {
  OWNER_MISMATCH: 0,
  ESCROW_MISMATCH: 1,
  WRONG_CHAIN: 2,
  WRONG_RPC: 2,
  CHAIN_MISMATCH: 2,
  TX_MISMATCH: 3,
};

export function PostTaskPage() {
  const { session } = useSession();
  const settlement = useSettlement();
  const location = useLocation();
  const [params] = useSearchParams();
  const serviceId = params.get("service");
  const service = useQuery({
    queryKey: ["service", serviceId],
    queryFn: () => marketApi().service(Number(serviceId)),
    enabled: serviceId !== null,
  });
  if (!session) return <SignInPanel reason="Sign in with the wallet that pays the reward to post a task." />;
  if (settlement.isLoading || service.isLoading) return null;
  // The chains a task can be posted on (the posting chain first, as the settlement record lists them).
  const postable = (settlement.data?.chains ?? []).filter((c) => c.postable && c.escrowAddress && c.token);
  if (postable.length === 0)
    return <Alert color="red">This server has no postable settlement chain (CHAIN_NOT_CONFIGURED).</Alert>;
  if (service.isError) return <Alert color="red">This service cannot be rented: {describeError(service.error)}</Alert>;
  if (service.data && !service.data.active)
    return <Alert color="red">This service is no longer offered (SERVICE_NOT_ACTIVE).</Alert>;
  // A rental pays in the service's token: only the chains that settle in it.
  const chains = service.data
    ? postable.filter((c) => c.token!.address.toLowerCase() === service.data!.token.toLowerCase())
    : postable;
  if (service.data && chains.length === 0)
    return (
      <Alert color="red">
        This service is priced in {service.data.token}, not in the settlement token {postable[0].token!.address}: it
        cannot be rented here (SERVICE_TOKEN_MISMATCH).
      </Alert>
    );
  // Following "Post a task" again opens a fresh form (a new history entry, a new key).
  return (
    <PostForm
      key={location.key}
      session={session}
      chains={chains}
      postingChain={settlement.data!.postingChain}
      service={service.data ?? null}
    />
  );
}

function regexProblem(pattern: string): string | null {
  if (!pattern) return null;
  try {
    new RegExp(pattern);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

function PostForm({
  session,
  chains,
  postingChain,
  service,
}: {
  session: Session;
  chains: Settlement[];
  postingChain: string;
  service: ServiceView | null;
}) {
  // The settlement chain of the task: the posting chain unless the poster picks another postable one.
  const [chainName, setChainName] = useState(
    (chains.find((c) => c.chain === postingChain) ?? chains[0]).chain as Settlement["chain"],
  );
  const chain = chains.find((c) => c.chain === chainName) ?? chains[0];
  const token = chain.token!;
  const queryClient = useQueryClient();
  const price = service ? BigInt(service.price_raw) : 0n;
  const [brief, setBrief] = useState("");
  const [reward, setReward] = useState<string | number>(service ? formatUnits(price, token.decimals) : 5);
  const [duration, setDuration] = useState<string | null>("86400");
  const [capabilities, setCapabilities] = useState<string[]>([]);
  const [mode, setMode] = useState("auto");
  const [minLength, setMinLength] = useState<string | number>("");
  const [keywords, setKeywords] = useState<string[]>([]);
  const [fields, setFields] = useState<string[]>([]);
  const [pattern, setPattern] = useState("");
  const [privacy, setPrivacy] = useState("public");
  const [agents, setAgents] = useState<string[]>(service ? [service.agent_address] : []);
  const [touched, setTouched] = useState(false);
  const executors = useQuery({
    queryKey: ["executors", "all", chain.chain],
    // Only agents that settle on the task's chain can be given its brief (the SDK refuses the others).
    queryFn: () => marketApi().executors({ limit: 200, chain: chain.chain }),
    enabled: privacy === "private",
  });
  const [step, setStep] = useState(-1);
  const [checks, setChecks] = useState<Check[]>([]);
  const [listed, setListed] = useState<{ taskHash: string; onChainTaskId: number; chain: string } | null>(null);

  const criteria: Criteria = {};
  if (minLength !== "") criteria.min_length = Number(minLength);
  if (keywords.length) criteria.contains_keywords = keywords;
  if (fields.length) criteria.required_fields = fields;
  if (pattern) criteria.regex_pattern = pattern;
  // More decimal places than the token has is refused, never rounded or cut: the reward is exactly what was typed.
  const rewardText = String(reward ?? "").trim();
  const rewardPlaces = /^\d*\.(\d+)$/.exec(rewardText)?.[1].length ?? 0;
  let amount = 0n;
  try {
    amount = rewardPlaces > token.decimals ? 0n : parseUnits(rewardText || "0", token.decimals);
  } catch {
    amount = 0n;
  }
  const errors = {
    brief: !brief.trim()
      ? "Write what the agent should do"
      : [...brief].length > BRIEF_MAX
        ? `At most ${BRIEF_MAX} characters`
        : null,
    reward:
      rewardPlaces > token.decimals
        ? `${token.symbol} has ${token.decimals} decimal places: ${rewardText} has ${rewardPlaces}`
        : amount <= 0n
          ? "The reward must be more than 0"
          : amount < price
            ? `At least the service's price, ${formatAmount(price.toString(), token.decimals, token.symbol)}`
            : null,
    criteria:
      mode === "auto" && Object.keys(criteria).length === 0
        ? "Auto verification needs at least one rule (length, keywords, fields or a pattern)"
        : null,
    pattern: regexProblem(pattern),
    agents: privacy === "private" && agents.length === 0 ? "Choose at least one agent who may read the brief" : null,
  };
  const valid = !Object.values(errors).some(Boolean);
  const show = (error: string | null) => (touched ? error : null);

  const post = useMutation({
    mutationFn: async () => {
      setChecks([]);
      setListed(null);
      setStep(0);
      const walletChainId = async () =>
        Number(toBigInt((await session.provider.request({ method: "eth_chainId" })) as string));
      let walletChain = await walletChainId();
      if (walletChain !== chain.chainId) {
        // Ask the wallet to move to the settlement chain; a refusal shows as the failed chain check below.
        await session.provider
          .request({ method: "wallet_switchEthereumChain", params: [{ chainId: toQuantity(chain.chainId!) }] })
          .catch(() => undefined);
        walletChain = await walletChainId();
      }
      // The SDK's posting flow: upload (a private brief sealed in this page first), build, the careful client's
      // checks, approve exactly the reward, fund, list. Each check refuses with its own code before anything is signed.
      const checkList = (failed?: number): Check[] =>
        [
          `Sent from the signed-in wallet ${session.address}`,
          `Sent to the escrow of the settlement record ${chain.escrowAddress}`,
          `The wallet's chain (${walletChain}) is the settlement record's (${chain.chainId})`,
          "The call is createTask for this brief and exactly this reward, with no value attached",
        ].map((label, i) => ({ label, ok: i !== failed }));
      const signer = await new BrowserProvider(session.provider).getSigner();
      const chosen = (executors.data?.executors ?? []).filter((e) => agents.includes(e.address));
      let posted;
      try {
        posted = await postTask(
          {
            brief,
            privacy: privacy as "public" | "private",
            amount,
            duration: Number(duration),
            verificationMode: mode as "auto" | "manual",
            ...(mode === "auto" ? { verificationCriteria: criteria } : {}),
            ...(capabilities.length ? { requiredCapabilities: capabilities } : {}),
            ...(privacy === "private"
              ? { recipients: chosen.map((e) => ({ address: e.address, publicKey: e.publicKey! })) }
              : {}),
            // A rental is pinned at listing: the escrow's task is the same, the listing names the agent and service.
            ...(service ? { targetExecutor: service.agent_address, serviceId: service.id } : {}),
          },
          {
            api: marketApi(session),
            signer,
            chain: chain.chain,
            expect: { chainId: chain.chainId!, escrow: chain.escrowAddress!.toLowerCase() },
            onStage: (stage) => {
              if (stage === "uploaded") setStep(1);
              if (stage === "approve-signed") {
                setChecks(checkList());
                setStep(3);
              }
              if (stage === "approved") setStep(4);
              if (stage === "create-sent") setStep(5);
            },
          },
        );
      } catch (error) {
        const failed = CHECK_OF_CODE[(error as { code?: string }).code ?? ""];
        if (failed === undefined) throw error;
        setStep(2);
        setChecks(checkList(failed));
        throw new Error("A check failed: nothing was signed.", { cause: error });
      }
      setStep(6);
      setListed({ taskHash: posted.taskHash, onChainTaskId: posted.onChainTaskId, chain: chain.chain });
      // A fresh form for the next task; the progress and the link to this one stay.
      setBrief("");
      setCapabilities([]);
      setMinLength("");
      setKeywords([]);
      setFields([]);
      setPattern("");
      setAgents(service ? [service.agent_address] : []);
      setTouched(false);
      void queryClient.invalidateQueries({ queryKey: ["open-tasks"] });
    },
  });

  return (
    <Stack maw={760}>
      <Title order={2}>{service ? "Rent a service" : "Post a task"}</Title>
      {service && (
        <Alert color="blue" title={`Renting “${service.name}”`} data-testid="rental">
          The task goes to agent <span title={service.agent_address}>{shortAddress(service.agent_address)}</span> only
          (it is not on the open board); the reward is at least the service&apos;s price,{" "}
          {formatAmount(String(service.price_raw), token.decimals, token.symbol)}.{" "}
          <Anchor component={Link} to="/post">
            Post an open task instead
          </Anchor>
          <Text size="sm" mt="xs" data-testid="rental-terms">
            The service&apos;s terms: {service.description}
            {service.delivery_time_seconds ? ` Delivered within ${service.delivery_time_seconds / 3600} h.` : ""}
            {service.capabilities.length ? ` Capabilities: ${service.capabilities.join(", ")}.` : ""}
          </Text>
        </Alert>
      )}
      <Text size="sm" c="dimmed">
        The reward is held by the escrow until the work passes verification. Anyone can read a public brief; a private
        brief is encrypted in this page and only the agents you choose can open it.
      </Text>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          setTouched(true);
          if (valid && !post.isPending) post.mutate();
        }}
      >
        <Stack>
          {chains.length > 1 && (
            <Stack gap={4}>
              <Text size="sm" fw={500} id="chain-label">
                Settlement chain
              </Text>
              <SegmentedControl
                aria-labelledby="chain-label"
                value={chain.chain}
                onChange={(value) => {
                  setChainName(value as Settlement["chain"]);
                  // The chosen agents must settle on the new chain: choose again from its directory.
                  setAgents(service ? [service.agent_address] : []);
                }}
                disabled={post.isPending}
                data={chains.map((c) => ({ value: c.chain, label: `${c.chain} (chain ${c.chainId})` }))}
              />
              <Text size="xs" c="dimmed">
                The reward is held by {chain.chain}&apos;s escrow; the wallet is asked to switch to chain{" "}
                {chain.chainId} before anything is signed.
              </Text>
            </Stack>
          )}
          <Stack gap={4}>
            <Text size="sm" fw={500} id="privacy-label">
              Privacy
            </Text>
            <SegmentedControl
              aria-labelledby="privacy-label"
              value={privacy}
              onChange={setPrivacy}
              data={[
                { value: "public", label: "Public" },
                { value: "private", label: "Private" },
              ]}
            />
          </Stack>
          {privacy === "private" && (
            <MultiSelect
              label="Agents who may read the brief"
              description="The brief key is wrapped to each one's public key (from the agents directory)"
              placeholder={executors.isLoading ? "Loading agents…" : "Choose agents"}
              data={(executors.data?.executors ?? []).map((e) => ({
                value: e.address,
                label: `${shortAddress(e.address)} · ${e.capabilities.join(", ") || "no capabilities"}`,
              }))}
              value={agents}
              onChange={setAgents}
              searchable
              error={show(errors.agents)}
            />
          )}
          <Textarea
            label="Brief"
            description={`What the agent should do (${[...brief].length} / ${BRIEF_MAX})`}
            autosize
            minRows={4}
            required
            value={brief}
            onChange={(e) => setBrief(e.currentTarget.value)}
            onBlur={() => setTouched(true)}
            error={show(errors.brief)}
          />
          <Group grow wrap="wrap" align="flex-start">
            <NumberInput
              label={`Reward (${token.symbol})`}
              min={0}
              required
              value={reward}
              onChange={setReward}
              error={show(errors.reward)}
              style={{ minWidth: 160 }}
            />
            <Select
              label="Deadline"
              data={DURATIONS}
              value={duration}
              onChange={setDuration}
              allowDeselect={false}
              style={{ minWidth: 160 }}
            />
          </Group>
          <TagsInput
            label="Required capabilities"
            description="Only agents with all of these take the task (press Enter after each)"
            value={capabilities}
            onChange={(v) => setCapabilities(v.map((c) => c.trim().toLowerCase()).filter(Boolean))}
            maxTags={20}
          />
          <Stack gap={4}>
            <Text size="sm" fw={500} id="mode-label">
              Verification
            </Text>
            <SegmentedControl
              aria-labelledby="mode-label"
              value={mode}
              onChange={setMode}
              data={[
                { value: "auto", label: "Automatic rules" },
                { value: "manual", label: "I review it" },
              ]}
            />
          </Stack>
          {mode === "auto" && (
            <Card withBorder>
              <Stack gap="sm">
                <Text size="sm">The marketplace verifier pays when the deliverable meets every rule.</Text>
                <NumberInput label="Minimum length (characters)" min={0} value={minLength} onChange={setMinLength} />
                <TagsInput label="Must contain the keywords" value={keywords} onChange={setKeywords} />
                <TagsInput label="Must have the JSON fields" value={fields} onChange={setFields} />
                <TextInput
                  label="Must match the pattern (regular expression)"
                  value={pattern}
                  onChange={(e) => setPattern(e.currentTarget.value)}
                  error={errors.pattern}
                />
                {show(errors.criteria) && (
                  <Text size="sm" c="red" role="alert">
                    {errors.criteria}
                  </Text>
                )}
              </Stack>
            </Card>
          )}
          <Group>
            <Button type="submit" loading={post.isPending} disabled={touched && !valid}>
              Post and fund the task
            </Button>
          </Group>
        </Stack>
      </form>
      {step >= 0 && (
        <Card withBorder aria-live="polite">
          <Stepper active={step} orientation="vertical" size="sm">
            {STEPS.map((label, i) => (
              <Stepper.Step
                key={label}
                label={label}
                loading={post.isPending && step === i}
                color={post.isError && step === i ? "red" : undefined}
                description={i === 2 && checks.length > 0 ? <CheckList checks={checks} /> : undefined}
              />
            ))}
          </Stepper>
        </Card>
      )}
      {post.isError && (
        <Alert color="red" title="Not posted" role="alert">
          {describeError(post.error)}
        </Alert>
      )}
      {listed && (
        <Alert color="green" title="Listed" data-testid="posted">
          Task #{listed.onChainTaskId} on {listed.chain} is funded and listed ({privacy}).{" "}
          <Anchor component={Link} to={`/tasks/${listed.taskHash}`}>
            Follow it
          </Anchor>
        </Alert>
      )}
    </Stack>
  );
}

function CheckList({ checks }: { checks: Check[] }) {
  return (
    <List size="xs" spacing={2} data-testid="checks">
      {checks.map((c) => (
        <List.Item
          key={c.label}
          icon={
            <ThemeIcon size={14} radius="xl" color={c.ok ? "teal" : "red"} aria-label={c.ok ? "passed" : "failed"}>
              <span aria-hidden style={{ fontSize: 9 }}>
                {c.ok ? "✓" : "✗"}
              </span>
            </ThemeIcon>
          }
        >
          {c.label}
        </List.Item>
      ))}
    </List>
  );
}
