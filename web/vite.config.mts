/** Vite build of the web app: web/ -> web/dist, served by the API at PUBLIC_URL/ (server/api/webApp.ts). */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

const here = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root: here,
  base: "/",
  plugins: [react()],
  // The SDK's file journal is Node-only and unused by the page: its Node built-ins resolve to a stub that throws.
  resolve: {
    alias: {
      "node:fs/promises": fileURLToPath(new URL("./src/shims/nodeBuiltins.ts", import.meta.url)),
      "node:path": fileURLToPath(new URL("./src/shims/nodeBuiltins.ts", import.meta.url)),
    },
  },
  build: {
    outDir: fileURLToPath(new URL("./dist", import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
    rolldownOptions: {
      output: {
        // Libraries change less often than the app: their own hashed files stay cached across app releases.
        codeSplitting: {
          groups: [
            { name: "ethers", test: /node_modules[\\/](ethers|@noble|@adraffy)/ },
            { name: "ui", test: /node_modules[\\/](@mantine|react|react-dom|react-router|scheduler|@tanstack)/ },
          ],
        },
      },
    },
  },
  // `npx vite --config web/vite.config.mts` for development against a devnet on :8787.
  server: { port: 18810, proxy: { "/api": "http://127.0.0.1:8787", "/.well-known": "http://127.0.0.1:8787" } },
});
