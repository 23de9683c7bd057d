#!/usr/bin/env node
// The `market` command (package.json "bin"): runs the TypeScript CLI through ts-node, transpiling only (the types are
// checked by `npm run typecheck`). See docs/client.md.
"use strict";
const path = require("node:path");

require("ts-node").register({
  transpileOnly: true,
  project: path.join(__dirname, "..", "..", "..", "tsconfig.json"),
});
require("../main")
  .run(process.argv)
  .then(
    (code) => process.exit(code),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
