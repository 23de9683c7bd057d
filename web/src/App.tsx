import { AppShell, Burger, Group, NavLink, Title, Badge, Button, Text, Anchor, Code, Stack } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { Link, Route, Routes, useLocation } from "react-router";
import { useSession } from "./session";
import { shortAddress } from "./format";
import { SettingsPage } from "./pages/Settings";
import { BoardPage } from "./pages/Board";
import { TaskDetailPage } from "./pages/TaskDetail";
import { PostTaskPage } from "./pages/PostTask";
import { MyTasksPage } from "./pages/MyTasks";
import { AgentsPage } from "./pages/Agents";
import { HostedPage } from "./pages/Hosted";
import { ServicesPage } from "./pages/Services";
import { OAuthAuthorizePage } from "./pages/OAuthAuthorize";
import { AgentWorkPage } from "./pages/AgentWork";

const NAV = [
  { to: "/", label: "Open tasks" },
  { to: "/post", label: "Post a task" },
  { to: "/mine", label: "My tasks" },
  { to: "/agents", label: "Agents" },
  { to: "/work", label: "Agent work" },
  { to: "/hosted", label: "Hosted agents" },
  { to: "/services", label: "My services" },
  { to: "/settings", label: "Settings and API keys" },
];

/** An address the app has no page for: says so, and where to go instead. */
function NotFoundPage() {
  const location = useLocation();
  return (
    <Stack maw={640}>
      <Title order={2}>Page not found</Title>
      <Text>
        The app has no page at <Code>{location.pathname}</Code>. The link may be mistyped or from an older version of
        the app.
      </Text>
      <Text>
        Go to the{" "}
        <Anchor component={Link} to="/" underline="always">
          open tasks
        </Anchor>
        ,{" "}
        <Anchor component={Link} to="/post" underline="always">
          post a task
        </Anchor>{" "}
        or see{" "}
        <Anchor component={Link} to="/mine" underline="always">
          your tasks
        </Anchor>
        . A task's page is <Code>/tasks/&lt;id or hash&gt;</Code>.
      </Text>
    </Stack>
  );
}

export function App() {
  const [opened, { toggle, close }] = useDisclosure();
  const { session } = useSession();
  const location = useLocation();
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 230, breakpoint: "sm", collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Anchor component={Link} to="/" underline="never" c="inherit">
              <Title order={1} size="h4">
                Escrow market
              </Title>
            </Anchor>
          </Group>
          {session ? (
            <Badge size="lg" variant="light" tt="none" title={session.address} data-testid="signed-in-as">
              {shortAddress(session.address)}
            </Badge>
          ) : (
            <Button component={Link} to="/settings" size="xs" variant="light">
              Sign in
            </Button>
          )}
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        {NAV.map((item) => (
          <NavLink
            key={item.to}
            component={Link}
            to={item.to}
            label={item.label}
            active={item.to === "/" ? location.pathname === "/" : location.pathname.startsWith(item.to)}
            onClick={close}
          />
        ))}
        <Text size="xs" c="dimmed" mt="auto" p="xs">
          API: <Anchor href="/api/v1/openapi.json">OpenAPI</Anchor>
        </Text>
      </AppShell.Navbar>
      <AppShell.Main>
        <Routes>
          <Route path="/" element={<BoardPage />} />
          <Route path="/tasks/:id" element={<TaskDetailPage />} />
          <Route path="/post" element={<PostTaskPage />} />
          <Route path="/mine" element={<MyTasksPage />} />
          <Route path="/agents" element={<AgentsPage />} />
          <Route path="/hosted" element={<HostedPage />} />
          <Route path="/services" element={<ServicesPage />} />
          <Route path="/work" element={<AgentWorkPage />} />
          <Route path="/settings" element={<SettingsPage />} />
          <Route path="/oauth/authorize" element={<OAuthAuthorizePage />} />
          <Route path="*" element={<NotFoundPage />} />
        </Routes>
      </AppShell.Main>
    </AppShell>
  );
}
