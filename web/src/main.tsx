// First: the SDK uses Node's global Buffer, some of it as its modules evaluate (brief crypto constants).
import "./shims/buffer";
import "@mantine/core/styles.css";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { BrowserRouter } from "react-router";
import { MantineProvider, createTheme, darken, type CSSVariablesResolver } from "@mantine/core";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { SessionProvider } from "./session";
import { App } from "./App";

// Shade 8 of the palette and darker dimmed text keep every text at WCAG AA contrast (4.5:1) in both schemes.
const theme = createTheme({
  primaryColor: "blue",
  primaryShade: { light: 8, dark: 8 },
  defaultRadius: "md",
  autoContrast: true,
});
// The "light" and "outline" variants (badges, the active link) draw text in the palette's colour: its darkest shades
// in the light scheme (over its lightest hover shade), its lightest in the dark one.
const palette = (
  t: Parameters<CSSVariablesResolver>[0],
  shade: number,
  name: "light-color" | "light-hover" | "outline",
  darkenBy = 0,
) =>
  Object.fromEntries(
    Object.keys(t.colors)
      .filter((c) => c !== "dark")
      .map((c) => [`--mantine-color-${c}-${name}`, darken(t.colors[c][shade], darkenBy)]),
  );
const resolver: CSSVariablesResolver = (t) => ({
  variables: {},
  light: {
    "--mantine-color-dimmed": t.colors.gray[7],
    ...palette(t, 9, "light-color", 0.3),
    ...palette(t, 1, "light-hover"),
    ...palette(t, 8, "outline"),
  },
  dark: { "--mantine-color-dimmed": t.colors.dark[1], ...palette(t, 3, "light-color"), ...palette(t, 3, "outline") },
});
const queryClient = new QueryClient({ defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: true } } });

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    {/* Dark and light follow the system (prefers-color-scheme). */}
    <MantineProvider theme={theme} defaultColorScheme="auto" cssVariablesResolver={resolver}>
      <QueryClientProvider client={queryClient}>
        <SessionProvider>
          <BrowserRouter>
            <App />
          </BrowserRouter>
        </SessionProvider>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
