/**
 * Gas benchmark of the escrow and the agent factory: `npx hardhat run bench/gas.ts` (npm run bench:gas).
 *
 * Deploys with the deploy library (no address book written) on the in-process Hardhat network and prints the gas used
 * by whole transactions (receipt.gasUsed, through the proxy, intrinsic gas and calldata included) of every hot path,
 * in steady state: the escrow, the treasury and the worker already hold the token and the factory's nonce is not
 * zero, so no figure pays a one-off zero-to-nonzero write that later transactions would not pay. Figures that have a
 * target are printed with PASS or OVER. The script always exits 0 unless it fails to run: it is a benchmark.
 */
import { ethers } from "hardhat";
import type { ContractTransactionResponse } from "ethers";
import { deployAll } from "../scripts/deploy";
import type { ITaskEscrow } from "../typechain-types/contracts/TaskEscrow";

/** The labels the API posts every task with (the category it always sends, the zone clients default to). */
const CATEGORY = "general";
const ZONE = "global";
const DAY = 86_400;
const AMOUNT = ethers.parseUnits("100", 6);
const BATCH_SIZES = [1, 10, 50] as const;

/** Issue 31's targets (issue 9's were 150,000, 100,000 and 340,000). */
const TARGETS = {
  createTask: 120_000n,
  createTasksPerTaskAt50: 70_000n,
  createAssignSubmitPass: 300_000n,
} as const;

/** A realistic brief or evidence hash: the keccak256 of some text, 32 nonzero-looking bytes. */
const briefHash = (label: string) => ethers.keccak256(ethers.toUtf8Bytes(`brief: ${label}`));
const evidenceHash = (label: string) => ethers.keccak256(ethers.toUtf8Bytes(`{"result":"${label}"}`));

async function gasOf(sent: Promise<ContractTransactionResponse>): Promise<bigint> {
  const receipt = await (await sent).wait();
  if (!receipt) throw new Error("no receipt");
  return receipt.gasUsed;
}

interface Row {
  operation: string;
  gas: bigint;
  target?: bigint;
  note?: string;
}

function printTable(rows: Row[]): void {
  const format = (value: bigint) => value.toLocaleString("en-US");
  const header = ["operation", "gas used", "target", "result"];
  const lines = rows.map((row) => [
    row.operation,
    format(row.gas),
    row.target === undefined ? "" : `<= ${format(row.target)}`,
    row.target === undefined ? (row.note ?? "") : row.gas <= row.target ? "PASS" : "OVER",
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column].length)));
  const render = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === 1 || column === 2 ? cell.padStart(widths[column]) : cell.padEnd(widths[column]),
      )
      .join("  ");
  console.log(render(header));
  console.log(widths.map((width) => "-".repeat(width)).join("  "));
  for (const line of lines) console.log(render(line));
}

async function main(): Promise<void> {
  const [, treasury, verifier, poster, worker, verifierAgent, newPoster, newWorker] = await ethers.getSigners();
  const { escrow, agentFactory, mockUsdc } = await deployAll({ write: false });
  const usdc = mockUsdc!;
  const token = await usdc.getAddress();
  const escrowAddress = await escrow.getAddress();
  await usdc.mint(poster.address, ethers.parseUnits("1000000", 6));
  await usdc.connect(poster).approve(escrowAddress, ethers.MaxUint256);
  const asPoster = escrow.connect(poster);
  const asVerifier = escrow.connect(verifier);
  const asWorker = escrow.connect(worker);
  let nextId = await escrow.nextTaskId();
  const create = async (label: string, zone: string = ZONE) => {
    const id = nextId++;
    const gas = await gasOf(asPoster.createTask(briefHash(label), token, AMOUNT, CATEGORY, zone, DAY));
    return { id, gas };
  };

  const rows: Row[] = [];

  // Warm-up. The first task puts the token into the escrow and stays Funded, so the escrow's balance never returns
  // to zero (a payout that empties it would earn a storage refund no busy escrow gets). The first payout gives the
  // worker and the treasury a balance. Both are reported for information; the figures below are the steady state.
  const reserve = await create("reserve");
  const warmUp = await create("warm-up");
  await asVerifier.marketplaceAssign(warmUp.id, worker.address);
  await asWorker.submitEvidence(warmUp.id, evidenceHash("warm-up"));
  const firstPass = await gasOf(asVerifier.completeVerification(warmUp.id, true));

  // createTask, steady state, and the whole happy path of the same task.
  const task = await create("steady");
  const assign = await gasOf(asVerifier.marketplaceAssign(task.id, worker.address));
  const submit = await gasOf(asWorker.submitEvidence(task.id, evidenceHash("steady")));
  const pass = await gasOf(asVerifier.completeVerification(task.id, true));

  // createTask with labels other than the defaults the API sends: they take a storage slot of their own.
  const otherLabels = await create("other labels", "eu-west");

  // createTaskWithVerifier.
  const withVerifier = await gasOf(
    asPoster.createTaskWithVerifier(
      briefHash("own verifier"),
      token,
      AMOUNT,
      CATEGORY,
      ZONE,
      DAY,
      verifierAgent.address,
    ),
  );
  nextId++;

  // createTasks at each batch size.
  const batches: Row[] = [];
  const batchIds: bigint[] = [];
  for (const size of BATCH_SIZES) {
    const tasks: ITaskEscrow.NewTaskStruct[] = Array.from({ length: size }, (_, i) => ({
      taskHash: briefHash(`batch ${size} #${i}`),
      amount: AMOUNT,
      category: CATEGORY,
      locationZone: ZONE,
      duration: DAY,
      verifierAgent: ethers.ZeroAddress,
    }));
    const gas = await gasOf(asPoster.createTasks(token, tasks));
    for (let i = 0; i < size; i++) batchIds.push(nextId++);
    batches.push({
      operation: `createTasks, per task (batch of ${size})`,
      gas: gas / BigInt(size),
      target: size === 50 ? TARGETS.createTasksPerTaskAt50 : undefined,
      note: `whole batch ${gas.toLocaleString("en-US")}`,
    });
  }

  // A failed verdict, a cancellation and the timeouts, on tasks of the last batch.
  const [failId, cancelId, timeoutId, escalateId] = batchIds.slice(-4);
  for (const id of [failId, timeoutId, escalateId]) await asVerifier.marketplaceAssign(id, worker.address);
  for (const id of [failId, escalateId]) await asWorker.submitEvidence(id, evidenceHash(`task ${id}`));
  const fail = await gasOf(asVerifier.completeVerification(failId, false));
  const cancel = await gasOf(asPoster.cancelTask(cancelId));
  await ethers.provider.send("evm_increaseTime", [DAY]);
  await ethers.provider.send("evm_mine", []);
  const timeoutRefund = await gasOf(asPoster.claimTimeout(timeoutId));
  const timeoutEscalation = await gasOf(asPoster.claimTimeout(escalateId));

  // deployAgent, steady state (the first payment moves the nonce from zero).
  await usdc.connect(poster).approve(await agentFactory.getAddress(), ethers.MaxUint256);
  await agentFactory.connect(poster).deployAgent(0n);
  const deployAgent = await gasOf(agentFactory.connect(poster).deployAgent(0n));

  // The same creation with an exact approval, as the spec's careful client signs it: the allowance drops to zero.
  await usdc.connect(poster).approve(escrowAddress, AMOUNT);
  const exactApproval = (await create("exact approval")).gas;

  // A poster's first task and a worker's first assignment: each gives the account its id (two fresh slots).
  await usdc.mint(newPoster.address, AMOUNT);
  await usdc.connect(newPoster).approve(escrowAddress, ethers.MaxUint256);
  const firstOfPoster = await gasOf(
    escrow.connect(newPoster).createTask(briefHash("first of its poster"), token, AMOUNT, CATEGORY, ZONE, DAY),
  );
  const firstOfWorker = await gasOf(asVerifier.marketplaceAssign(nextId++, newWorker.address));

  rows.push(
    { operation: "createTask", gas: task.gas, target: TARGETS.createTask },
    { operation: "createTask (labels general, eu-west: stored)", gas: otherLabels.gas },
    { operation: "createTaskWithVerifier", gas: withVerifier },
    ...batches,
    { operation: "marketplaceAssign", gas: assign },
    { operation: "submitEvidence", gas: submit },
    { operation: "completeVerification (pass)", gas: pass },
    { operation: "completeVerification (fail)", gas: fail },
    { operation: "cancelTask", gas: cancel },
    { operation: "claimTimeout (Assigned: refund)", gas: timeoutRefund },
    { operation: "claimTimeout (Submitted: escalation)", gas: timeoutEscalation },
    { operation: "deployAgent", gas: deployAgent },
    {
      operation: "create + assign + submit + pass",
      gas: task.gas + assign + submit + pass,
      target: TARGETS.createAssignSubmitPass,
    },
  );

  console.log("\nGas used per transaction (receipt.gasUsed, through the proxy), steady state\n");
  printTable(rows);
  console.log("\nFor information (not steady state / other approval style)\n");
  printTable([
    { operation: "createTask (first task: escrow balance 0 -> x)", gas: reserve.gas },
    { operation: "completeVerification pass (first payout: worker and treasury 0 -> x)", gas: firstPass },
    { operation: "createTask with an exact approval (allowance x -> 0, refund)", gas: exactApproval },
    { operation: "createTask, the poster's first (account id given)", gas: firstOfPoster },
    { operation: "marketplaceAssign, the worker's first (account id given)", gas: firstOfWorker },
  ]);
  console.log(`\ntreasury ${treasury.address}, token ${token}, escrow ${escrowAddress}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
