/**
 * The `market` command line: every command of the marketplace for posters, agents and the devnet admin, on the SDK.
 * `run(argv)` parses and runs one command and resolves to its exit code (client/cli/exitCodes.ts); the `bin` wrapper
 * (client/cli/bin/market.js) calls it. Reference: docs/client.md.
 */
import { Command, CommanderError, Option } from "commander";
import { EXIT, type ExitCode } from "./exitCodes";
import { CliError } from "./errors";
import { Output, type OutputStreams } from "./output";
import { action, type RunState } from "./context";
import * as account from "./commands/account";
import * as posting from "./commands/posting";
import * as tasks from "./commands/tasks";
import * as agents from "./commands/agents";
import * as hosted from "./commands/hosted";
import * as devnet from "./commands/devnet";
import * as tx from "./commands/tx";

const EXIT_HELP = `
Configuration (each value: flag, else environment, else the config file written by \`market login\`):
  --api-url      MARKET_API_URL      the service (default http://127.0.0.1:8787, the devnet)
  --api-key      MARKET_API_KEY      the API key (sk_...)
  --private-key  MARKET_PRIVATE_KEY  the wallet that signs (never written to the config file)
  --rpc-url      MARKET_RPC_URL      the chain's JSON-RPC (default http://127.0.0.1:8545, the devnet's base)
                 MARKET_ARC_RPC_URL  arc's JSON-RPC for commands on arc (default http://127.0.0.1:8546, the devnet's arc)
  --config       MARKET_CONFIG       the config file (default ~/.config/market/config.json, mode 0600)

Exit codes:
  0 done   1 unexpected   2 bad command line or input   3 credentials or configuration
  4 refused by the service   5 retry later (unreachable, 429, 503)   6 transaction reverted or failed a check
  7 timed out

Every command takes --json: stdout then carries one JSON document (the result, or { "error": ... }).`;

export function buildProgram(state: RunState): Command {
  const program = new Command("market");
  program
    .description("The escrow task marketplace from the command line: post and follow tasks, run an agent.")
    .version("0.1.0", "-V, --version")
    .option("--api-url <url>", "the service's URL (MARKET_API_URL)")
    .option("--api-key <key>", "the API key (MARKET_API_KEY)")
    .option("--private-key <hex>", "the signing wallet's private key (MARKET_PRIVATE_KEY)")
    .option("--rpc-url <url>", "the chain's JSON-RPC URL (MARKET_RPC_URL)")
    .option("--config <path>", "the config file (MARKET_CONFIG)")
    .option("--json", "print one JSON document on stdout (for scripts)")
    .addHelpText("after", EXIT_HELP)
    .configureOutput({
      writeOut: (text) => state.streams.stdout.write(text),
      writeErr: (text) => state.streams.stderr.write(text),
      outputError: () => undefined, // printed as a CliError by run()
    })
    .exitOverride();
  const act = <A extends unknown[]>(run: Parameters<typeof action<A>>[1]) => action<A>(state, run);

  program
    .command("login")
    .description("sign in with the wallet, create an API key and save it in the config file (mode 0600)")
    .option("--label <label>", "the key's label", "market cli")
    .action(act(account.login));
  program
    .command("logout")
    .description("revoke the config file's API key and remove it from the file")
    .action(act(account.logout));
  program
    .command("whoami")
    .description("the wallet the API key acts as, and where each setting comes from")
    .action(act(account.whoami));
  const keys = program
    .command("keys")
    .description("the wallet's API keys: list them (default), or revoke one")
    .action(act(account.listKeys));
  keys
    .command("revoke")
    .description("revoke one of the wallet's API keys (it stops working at once)")
    .argument("<id>", "the key's id, as `market keys` lists it")
    .action(act(account.revokeKey));
  program
    .command("faucet")
    .description("devnet only: give the signing wallet test USDC (1000 unless --amount) and gas money")
    .option("--amount <usdc>", "how much, in USDC")
    .option("--amount-raw <units>", "how much, in the token's smallest units")
    .action(act(devnet.faucet));

  const privacy = () =>
    [
      new Option("--public", "the brief is readable by anyone").conflicts("private"),
      new Option("--private", "the brief is encrypted to the agents that may take it"),
    ] as const;
  const chainOption = () =>
    new Option(
      "--chain <chain>",
      "the settlement chain to post on (default: the service's posting chain); on arc the wallet uses MARKET_ARC_RPC_URL unless --rpc-url is given",
    ).choices(["base", "arc"]);
  const post = program
    .command("post")
    .description("upload a brief, fund a task in escrow and list it (approve, send, confirm, index)")
    .option("--text <brief>", "the brief as text")
    .option("--file <path>", "the brief from a file")
    .option("--mode <mode>", "verification: manual (you review), auto (rules in --criteria), agent", "manual")
    .option("--criteria <json>", 'auto rules, e.g. \'{"required_fields":["summary"],"min_length":20}\'')
    .option("--capabilities <list>", "capabilities an agent needs, comma-separated")
    .option("--amount <usdc>", "the reward in USDC (e.g. 2.5)")
    .option("--amount-raw <units>", "the reward in the token's smallest units")
    .option("--duration <time>", "time to deliver: seconds or 90m, 1h, 2d", "1d")
    .option("--to <agent>", "offer the task to this agent only (its address)")
    .option("--verifier <address>", "the verifier agent (mode agent)");
  for (const option of privacy()) post.addOption(option);
  post.addOption(chainOption());
  post.action(act(posting.post));

  const many = program
    .command("post-many")
    .description("post every row of a CSV (with a header) or JSON Lines file in one batch")
    .argument("<file>", "rows with text|file, amount|amount_raw, duration, mode, criteria, capabilities, privacy")
    .addOption(
      new Option("--format <format>", "csv or jsonl (default: from the file's extension)").choices(["csv", "jsonl"]),
    )
    .option("--amount <usdc>", "the reward of rows without one")
    .option("--amount-raw <units>", "the reward of rows without one, in smallest units")
    .option("--duration <time>", "the duration of rows without one", "1d")
    .option("--mode <mode>", "the mode of rows without one", "manual");
  for (const option of privacy()) many.addOption(option);
  many.addOption(chainOption());
  many.action(act(posting.postMany));

  program
    .command("tasks")
    .description("your tasks: posted (default), offered to you, or the work you are doing")
    .addArgument(tasks.whichArgument())
    .option("--limit <n>", "at most this many", "50")
    .addOption(
      new Option("--chain <chain>", "only this chain's tasks (default: every chain's)").choices(["base", "arc"]),
    )
    .action(act(tasks.list));
  const TASK_ARG = "the task: its hash, or its on-chain id (2 or #2, as `market post` prints it)";
  const idChainOption = () =>
    new Option(
      "--chain <chain>",
      "the chain of a numeric task id (on-chain ids are per chain; default: the service's posting chain); a hash needs none",
    ).choices(["base", "arc"]);
  program
    .command("status")
    .description("a task's state")
    .argument("<task>", TASK_ARG)
    .addOption(idChainOption())
    .action(act(tasks.status));
  program
    .command("watch")
    .description("follow a task until it is settled (paid or refunded); --json gives the settling transaction")
    .argument("<task>", TASK_ARG)
    .option("--timeout <time>", "give up after this long (exit 7): seconds or 90m, 1h", "1h")
    .addOption(idChainOption())
    .action(act(tasks.watch));
  program
    .command("review")
    .description("judge the delivery of your manual task: --pass pays the worker, --fail refuses it")
    .argument("<task>", "the task hash")
    .addOption(new Option("--pass", "accept the delivery").conflicts("fail"))
    .addOption(new Option("--fail", "refuse the delivery"))
    .option("--reason <text>", "why (with --fail)")
    .action(act(tasks.review));
  for (const [name, description] of [
    ["cancel", "cancel your open task and get the reward back"],
    ["reclaim", "after the deadline: get the reward back (or escalate submitted, unjudged work)"],
    ["dispute", "raise a dispute on a submitted or judged task (poster or worker)"],
    ["escalate", "as the worker: escalate unjudged work 3 days after the deadline"],
    ["release", "as the worker: get paid for escalated, unjudged work after the 14-day dispute window"],
  ] as const) {
    program
      .command(name)
      .description(description)
      .argument("<task>", TASK_ARG)
      .addOption(idChainOption())
      .action(act(tasks.operation(name)));
  }

  const agent = program.command("agent").description("run an agent: register it, then let it take and deliver work");
  agent
    .command("register")
    .description("register your wallet as an agent (its public key lets posters encrypt briefs to it)")
    .option("--capabilities <list>", "what it can do, comma-separated", "text")
    .option("--min-reward <units>", "the smallest reward it takes, in the token's smallest units", "0")
    .option("--verifier-name <name>", "also offer to verify other agents' work, under this name")
    .action(act(agents.register));
  agent
    .command("run")
    .description("the agent runtime: take tasks it can do, run --exec on each brief, deliver its output")
    .requiredOption("--exec <command>", "a shell command: the brief on stdin, the result on stdout (JSON or text)")
    .option("--capabilities <list>", "what it can do, comma-separated", "text")
    .option("--max-tasks <n>", "stop after delivering this many")
    .option("--job-timeout <time>", "kill --exec after this long: seconds or 90m, 1h", "10m")
    .option("--min-reward <units>", "the smallest reward it takes, in the token's smallest units", "0")
    .action(act(agents.run));

  const services = program
    .command("services")
    .description("rent-an-agent services: list them (default), or add your own")
    .option("--agent <address>", "only this agent's")
    .action(act(agents.listServices));
  services
    .command("add")
    .description("offer a service as a registered agent")
    .requiredOption("--name <name>", "its name")
    .requiredOption("--description <text>", "what it delivers")
    .option("--price <usdc>", "its price in USDC")
    .option("--price-raw <units>", "its price in the token's smallest units")
    .option("--capabilities <list>", "comma-separated")
    .option("--delivery <time>", "delivery time: seconds or 1h, 2d")
    .action(act(agents.addService));

  program
    .command("tx")
    .description("unsigned transactions the service answered")
    .command("send")
    .description(
      "check an API answer carrying unsignedTx (and approveTx) against the settlement and the RPC, sign it with your wallet, send it, print the hash",
    )
    .argument("[file]", "the answer as JSON (curl's output, an MCP tool's answer); - or absent: stdin")
    .action(act(tx.send));

  program
    .command("deploy-fee")
    .description("the agent deploy fee; --pay pays it and turns it into a deploy credit")
    .option("--pay", "approve, pay and verify the fee")
    .option("--max-fee <units>", "refuse a fee above this, in the token's smallest units (default 1 USDC)")
    .action(act(agents.deployFee));

  const hostedAgents = program
    .command("hosted")
    .description("your hosted agents, which the service runs for you: list them (default), create, start, logs, ...")
    .action(act(hosted.list));
  hostedAgents
    .command("skills")
    .description("the built-in skills a hosted agent can install")
    .action(act(hosted.skills));
  hostedAgents
    .command("create")
    .description("create a hosted agent (spends a deploy credit; --pay pays the fee first)")
    .requiredOption("--slug <slug>", "its unique name in URLs: a-z, 0-9 and dashes")
    .requiredOption("--name <name>", "its display name")
    .option("--description <text>", "what it does")
    .option("--skill <id...>", "skills to install (see `market hosted skills`)")
    .option("--capabilities <list>", "capabilities beyond its skills', comma-separated")
    .option("--chains <list>", "the settlement chains it takes tasks on, comma-separated (default: all the service's)")
    .option("--min-reward <units>", "the smallest reward it takes, in the token's smallest units", "0")
    .option("--verifier-name <name>", "offer to verify other agents' work, under this name")
    .option("--pay", "pay the deploy fee first (approve exactly the fee, deployAgent, verify)")
    .action(act(hosted.create));
  hostedAgents
    .command("update")
    .description("change a hosted agent's extra capabilities or settlement chains (a running agent restarts)")
    .argument("<agent>", "its slug or id")
    .option("--capabilities <list>", "capabilities beyond its skills', comma-separated (replaces them; '' for none)")
    .option("--chains <list>", "the settlement chains it takes tasks on, comma-separated")
    .action(act(hosted.update));
  for (const name of ["start", "stop", "pause", "resume", "restart"] as const) {
    hostedAgents
      .command(name)
      .description(`${name} a hosted agent`)
      .argument("<agent>", "its slug or id")
      .action(act(hosted.action(name)));
  }
  hostedAgents
    .command("install")
    .description("install a skill on a hosted agent")
    .argument("<agent>", "its slug or id")
    .argument("<skill>", "the skill's id")
    .option("--skill-config <json>", "the skill's configuration, a JSON object (see `market hosted skills --json`)")
    .option("--secret <name=value...>", "a secret the skill needs (stored encrypted, never shown again)")
    .action(act(hosted.install));
  hostedAgents
    .command("uninstall")
    .description("uninstall a skill from a hosted agent")
    .argument("<agent>", "its slug or id")
    .argument("<skill>", "the skill's id")
    .action(act(hosted.uninstall));
  hostedAgents
    .command("logs")
    .description("a hosted agent's latest log lines")
    .argument("<agent>", "its slug or id")
    .option("--limit <n>", "how many lines (1 to 500)", "50")
    .action(act(hosted.logs));
  hostedAgents
    .command("delete")
    .description("delete a stopped hosted agent (its key is erased)")
    .argument("<agent>", "its slug or id")
    .action(act(hosted.remove));

  program
    .command("admin")
    .description("the escrow admin's operations (devnet)")
    .command("resolve")
    .description("rule on a disputed task: --worker pays the worker, --poster refunds the poster")
    .argument("<task>", "the task hash")
    .addOption(new Option("--worker", "rule for the worker").conflicts("poster"))
    .addOption(new Option("--poster", "rule for the poster"))
    .action(act(tasks.resolve));

  return program;
}

/** The command named in argv (for the usage hint), with a trailing space, or "". */
function commandOf(argv: string[]): string {
  const words = argv.slice(2).filter((word) => /^[a-z][a-z-]*$/.test(word));
  return words.length ? `${words[0]} ` : "";
}

/** Parses `argv` (as process.argv: node, script, args...) and runs the command; resolves to the exit code. */
export async function run(
  argv: string[],
  streams: OutputStreams = { stdout: process.stdout, stderr: process.stderr },
  env: NodeJS.ProcessEnv = process.env,
): Promise<ExitCode> {
  const state: RunState = { streams, env, exitCode: EXIT.OK };
  const program = buildProgram(state);
  try {
    await program.parseAsync(argv);
    return state.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return EXIT.OK; // --help, --version
      const json = argv.includes("--json");
      const message = error.message.replace(/^error: /, "");
      new Output(json, streams).error(
        new CliError({ code: "USAGE", message, exit: EXIT.USAGE, hint: `see \`market ${commandOf(argv)}--help\`` }),
      );
      return EXIT.USAGE;
    }
    throw error;
  }
}

if (require.main === module) {
  run(process.argv).then(
    (code) => process.exit(code),
    (error) => {
      console.error(error);
      process.exit(EXIT.UNEXPECTED);
    },
  );
}
