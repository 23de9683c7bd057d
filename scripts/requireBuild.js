// Runs before `npm start`, `npm run indexer` and `npm run agents:host`, which run the production build: without one,
// it says how to make it (or how to run from the sources) instead of Node's "Cannot find module".
const fs = require("node:fs");
const path = require("node:path");

const entry = process.argv[2];
if (!fs.existsSync(path.join(__dirname, "..", entry))) {
  console.error(
    `${entry} is missing: build first with \`npm run build:node\` (or run from the sources with the :dev script, ` +
      "e.g. `npm run start:dev`).",
  );
  process.exit(1);
}
