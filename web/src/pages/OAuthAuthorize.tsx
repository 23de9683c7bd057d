/**
 * The MCP authorization page (`/oauth/authorize`, the authorization endpoint of docs/oauth.md): an MCP host sends its
 * owner here; signed in with their wallet, the owner sees which client asks, where the answer goes and the scopes,
 * keeps the scopes they grant, and approves or denies. The service issues the code; the page follows the redirect.
 */
import { useState } from "react";
import { Alert, Anchor, Button, Card, Checkbox, Code, Group, Stack, Text, Title } from "@mantine/core";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useLocation } from "react-router";
import { MarketError } from "../../../client/sdk/index";
import { describeError } from "../api";
import { useSession } from "../session";
import { SignInPanel } from "../components/SignIn";
import { authorizationParams, decideAuthorization, describeAuthorization } from "../oauth";

export function OAuthAuthorizePage() {
  const location = useLocation();
  const [params] = useState(() => authorizationParams(location.search));
  const { session } = useSession();
  const request = useQuery({
    queryKey: ["oauth-authorization", params],
    queryFn: () => describeAuthorization(params),
    retry: false,
  });
  const [unchecked, setUnchecked] = useState<string[]>([]);
  const decide = useMutation({
    mutationFn: (approve: boolean) => {
      const kept = (request.data?.scopes ?? []).map((s) => s.name).filter((n) => !unchecked.includes(n));
      return decideAuthorization(
        params,
        approve ? { approve, grantedScope: kept.join(" ") } : { approve },
        session!.sessionToken,
      );
    },
    onSuccess: ({ redirectTo }) => window.location.assign(redirectTo),
  });

  if (request.isPending) return <Text>Checking the request…</Text>;
  if (request.isError) {
    const back =
      request.error instanceof MarketError && typeof request.error.details?.redirectTo === "string"
        ? request.error.details.redirectTo
        : undefined;
    return (
      <Stack maw={640}>
        <Title order={2}>Connect an app</Title>
        <Alert color="red" title="This authorization request cannot be answered" role="alert">
          {describeError(request.error)}
        </Alert>
        {back && (
          <Anchor href={back} underline="always">
            Return to the app with this error
          </Anchor>
        )}
      </Stack>
    );
  }
  const { client, redirectUri, scopes } = request.data;
  const name = client.name ?? client.clientId;
  const kept = scopes.filter((s) => !unchecked.includes(s.name));
  return (
    <Stack maw={720}>
      <Title order={2}>Connect {name}</Title>
      <Card withBorder>
        <Stack gap="xs">
          <Text>
            <strong data-testid="oauth-client-name">{name}</strong> asks to use the marketplace&apos;s MCP server as
            your wallet
            {session ? (
              <>
                {" "}
                (<Code>{session.address}</Code>)
              </>
            ) : null}
            .
          </Text>
          <Text size="sm">
            Client: <Code data-testid="oauth-client-id">{client.clientId}</Code> (
            {client.registration === "metadata-document" ? "described by its metadata document" : "registered itself"})
          </Text>
          <Text size="sm">
            The answer goes to <Code data-testid="oauth-redirect">{redirectUri}</Code>
          </Text>
          {client.uri && (
            <Text size="sm">
              Its site: <Code>{client.uri}</Code>
            </Text>
          )}
          <Text size="xs" c="dimmed">
            It never holds your wallet&apos;s key: transactions it builds still need your wallet to sign. Access lasts
            15 minutes at a time and renews until you disconnect it in Settings.
          </Text>
        </Stack>
      </Card>
      {session ? (
        <Card withBorder>
          <Stack>
            <Title order={3}>It asks for</Title>
            {scopes.map((scope) => (
              <Checkbox
                key={scope.name}
                label={scope.name}
                description={scope.description}
                checked={!unchecked.includes(scope.name)}
                onChange={(event) => {
                  const on = event.currentTarget.checked;
                  setUnchecked((list) => (on ? list.filter((n) => n !== scope.name) : [...list, scope.name]));
                }}
              />
            ))}
            <Group>
              <Button
                onClick={() => decide.mutate(true)}
                disabled={kept.length === 0}
                loading={decide.isPending && decide.variables === true}
              >
                Approve
              </Button>
              <Button
                variant="default"
                onClick={() => decide.mutate(false)}
                loading={decide.isPending && decide.variables === false}
              >
                Deny
              </Button>
            </Group>
            {decide.isError && (
              <Alert color="red" role="alert">
                {describeError(decide.error)}
              </Alert>
            )}
          </Stack>
        </Card>
      ) : (
        <SignInPanel reason="Sign in with the wallet this app will act as (signing costs nothing), then approve or deny." />
      )}
    </Stack>
  );
}
