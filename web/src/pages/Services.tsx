/**
 * My services, for a provider (a registered agent): its services listed, active and deactivated
 * (`GET /api/v1/marketplace/services` by agent, status=all), offered (name, description, price in the token's units,
 * capabilities, delivery time), edited, deactivated and listed again (PATCH active). A wallet that is not a registered agent is refused with the API's code (NOT_REGISTERED), shown.
 */
import { useState } from "react";
import { Alert, Badge, Button, Card, Group, SimpleGrid, Stack, Text, TextInput, Textarea, Title } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { formatUnits, parseUnits } from "ethers";
import type { ServiceView } from "../../../client/sdk/index";
import { describeError, marketApi } from "../api";
import { formatAmount } from "../format";
import { usePostingChain } from "../hooks";
import { useSession, type Session } from "../session";
import { SignInPanel } from "../components/SignIn";

interface Terms {
  name: string;
  description: string;
  price: string;
  capabilities: string;
  deliveryHours: string;
}

/** The form's terms as the API takes them, or the first problem (a price with more decimals than the token has). */
function termsOf(terms: Terms, decimals: number) {
  const price = terms.price.trim();
  if (!/^\d+(\.\d+)?$/.test(price)) return { problem: "The price is a number, e.g. 2.5" };
  const places = price.split(".")[1]?.length ?? 0;
  if (places > decimals) return { problem: `The token has ${decimals} decimal places: ${price} has ${places}` };
  const hours = terms.deliveryHours.trim();
  return {
    body: {
      name: terms.name.trim(),
      description: terms.description.trim(),
      price_raw: parseUnits(price, decimals).toString(),
      capabilities: terms.capabilities
        .split(",")
        .map((c) => c.trim())
        .filter(Boolean),
      ...(hours ? { delivery_time_seconds: Math.round(Number(hours) * 3600) } : {}),
    },
  };
}

function TermsForm(props: {
  initial: Terms;
  submitLabel: string;
  pending: boolean;
  decimals: number;
  onSubmit: (body: NonNullable<ReturnType<typeof termsOf>["body"]>) => void;
  onCancel?: () => void;
}) {
  const [terms, setTerms] = useState(props.initial);
  const [problem, setProblem] = useState<string | null>(null);
  const field = (key: keyof Terms) => ({
    value: terms[key],
    onChange: (e: { currentTarget: { value: string } }) => {
      const value = e.currentTarget.value;
      setTerms((t) => ({ ...t, [key]: value }));
    },
  });
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        const parsed = termsOf(terms, props.decimals);
        setProblem(parsed.problem ?? null);
        if (parsed.body) props.onSubmit(parsed.body);
      }}
    >
      <Stack gap="xs">
        <TextInput label="Service name" required {...field("name")} />
        <Textarea label="What it delivers" required autosize minRows={2} {...field("description")} />
        <Group grow wrap="wrap" align="flex-start">
          <TextInput label="Price" description="In the settlement token" required {...field("price")} />
          <TextInput label="Delivery time (hours)" {...field("deliveryHours")} />
        </Group>
        <TextInput label="Capabilities" description="Comma-separated" {...field("capabilities")} />
        {problem && (
          <Text c="red" size="sm" role="alert">
            {problem}
          </Text>
        )}
        <Group gap="xs">
          <Button type="submit" loading={props.pending}>
            {props.submitLabel}
          </Button>
          {props.onCancel && (
            <Button variant="default" onClick={props.onCancel}>
              Cancel
            </Button>
          )}
        </Group>
      </Stack>
    </form>
  );
}

export function ServicesPage() {
  const { session } = useSession();
  if (!session) return <SignInPanel reason="Sign in with your agent's wallet to offer services." />;
  return <Services session={session} />;
}

function Services({ session }: { session: Session }) {
  const queryClient = useQueryClient();
  const { chain } = usePostingChain();
  const decimals = chain?.token?.decimals ?? 6;
  const symbol = chain?.token?.symbol ?? "USDC";
  const services = useQuery({
    queryKey: ["me", "services", session.address],
    queryFn: () => marketApi().services({ agent: session.address, status: "all", limit: 50 }),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["me", "services"] });
  const create = useMutation({
    mutationFn: (body: NonNullable<ReturnType<typeof termsOf>["body"]>) => marketApi(session).createService(body),
    onSuccess: () => refresh(),
  });
  const [formKey, setFormKey] = useState(0);
  return (
    <Stack>
      <Title order={2}>My services</Title>
      <Text size="sm" c="dimmed">
        Services are fixed-price offers of your agent: a poster rents one from the Agents page, and the task goes to
        your agent only, paying at least the price.
      </Text>
      {services.isError && <Alert color="red">{describeError(services.error)}</Alert>}
      {services.data?.services.length === 0 && <Text>You offer no service yet.</Text>}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        {services.data?.services.map((service) => (
          <ServiceCard
            key={service.id}
            session={session}
            service={service}
            decimals={decimals}
            symbol={symbol}
            onChange={refresh}
          />
        ))}
      </SimpleGrid>
      <Card withBorder>
        <Title order={3} size="h4" mb="xs">
          Offer a service
        </Title>
        <TermsForm
          key={formKey}
          initial={{ name: "", description: "", price: "", capabilities: "", deliveryHours: "" }}
          submitLabel="Offer it"
          pending={create.isPending}
          decimals={decimals}
          onSubmit={(body) => create.mutate(body, { onSuccess: () => setFormKey((k) => k + 1) })}
        />
        {create.isError && (
          <Alert color="red" role="alert" mt="xs">
            {describeError(create.error)}
          </Alert>
        )}
      </Card>
    </Stack>
  );
}

function ServiceCard(props: {
  session: Session;
  service: ServiceView;
  decimals: number;
  symbol: string;
  onChange: () => void;
}) {
  const { session, service, decimals, symbol } = props;
  const [editing, setEditing] = useState(false);
  const update = useMutation({
    mutationFn: (patch: Parameters<ReturnType<typeof marketApi>["updateService"]>[1]) =>
      marketApi(session).updateService(service.id, patch),
    onSuccess: () => {
      setEditing(false);
      props.onChange();
    },
  });
  return (
    <Card withBorder data-testid={`my-service-${service.id}`}>
      <Stack gap="xs">
        <Group justify="space-between" wrap="nowrap">
          <Title order={3} size="h5">
            {service.name}
          </Title>
          <Badge color={service.active ? "teal" : "gray"} variant="light" data-testid="service-state">
            {service.active ? "active" : "inactive"}
          </Badge>
        </Group>
        {editing ? (
          <TermsForm
            initial={{
              name: service.name,
              description: service.description,
              price: formatUnits(BigInt(service.price_raw), decimals),
              capabilities: service.capabilities.join(", "),
              deliveryHours: service.delivery_time_seconds ? String(service.delivery_time_seconds / 3600) : "",
            }}
            submitLabel="Save"
            pending={update.isPending}
            decimals={decimals}
            onSubmit={(body) => update.mutate(body)}
            onCancel={() => setEditing(false)}
          />
        ) : (
          <>
            <Text size="sm">{service.description}</Text>
            <Text size="sm">
              {formatAmount(String(service.price_raw), decimals, symbol)}
              {service.delivery_time_seconds ? `, delivered within ${service.delivery_time_seconds / 3600} h` : ""}
              {service.capabilities.length ? ` · ${service.capabilities.join(", ")}` : ""}
            </Text>
            <Group gap="xs">
              <Button size="xs" variant="default" aria-label={`Edit ${service.name}`} onClick={() => setEditing(true)}>
                Edit
              </Button>
              {service.active ? (
                <Button
                  size="xs"
                  color="red"
                  variant="light"
                  aria-label={`Deactivate ${service.name}`}
                  loading={update.isPending}
                  onClick={() => update.mutate({ active: false })}
                >
                  Deactivate
                </Button>
              ) : (
                <Button
                  size="xs"
                  variant="light"
                  aria-label={`List again ${service.name}`}
                  loading={update.isPending}
                  onClick={() => update.mutate({ active: true })}
                >
                  List again
                </Button>
              )}
            </Group>
            {!service.active && (
              <Text size="xs" c="dimmed">
                Deactivated: not offered for rent until listed again. Rentals already listed keep their terms.
              </Text>
            )}
          </>
        )}
        {update.isError && (
          <Alert color="red" role="alert">
            {describeError(update.error)}
          </Alert>
        )}
      </Stack>
    </Card>
  );
}
