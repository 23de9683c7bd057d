import { Alert, Button, Code, CopyButton, Group } from "@mantine/core";

/** A secret the API answers once (an API key, a webhook's signing secret): shown with a copy button until dismissed. */
export function ShownOnce(props: {
  title: string;
  value: string;
  copyLabel: string;
  testId: string;
  onDismiss: () => void;
}) {
  return (
    <Alert color="green" title={props.title} withCloseButton closeButtonLabel="Dismiss" onClose={props.onDismiss}>
      <Group wrap="nowrap" gap="xs" align="center">
        <Code data-testid={props.testId} style={{ wordBreak: "break-all" }}>
          {props.value}
        </Code>
        <CopyButton value={props.value}>
          {({ copied, copy }) => (
            <Button
              size="xs"
              variant={copied ? "filled" : "light"}
              color={copied ? "teal.9" : undefined}
              onClick={copy}
            >
              {copied ? "Copied" : props.copyLabel}
            </Button>
          )}
        </CopyButton>
      </Group>
    </Alert>
  );
}
