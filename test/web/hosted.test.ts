/**
 * Hosted agents in the browser, as their owner meets them: the deploy fee paid from the page (the SDK's checks), an
 * agent created with a skill whose secret is typed once and never shown back, started, its log followed, a refusal
 * shown with its code in words, stopped, its key exported (the owner's signature; shown once), and deleted after a
 * confirmation that says its key is erased; another created with an extra capability on one of the settlement
 * chains (checkboxes of the settlement record's chains), its card showing both, its chains changed there. A
 * provider's services: offered (a price with too many decimals refused), edited, rented from another account with
 * the service's terms shown, and deactivated.
 */
import { expect } from "chai";
import { JsonRpcProvider, Wallet, parseEther } from "ethers";
import { fillAndPostTask, go, seriousA11yViolations, signInAs, useWebDevnet } from "./harness";

describe("web: owners and providers (hosted agents, services)", function () {
  const web = useWebDevnet(this, 240_000);

  it("pays the deploy fee, creates an agent, installs a skill with a secret, uninstalls one, starts it, follows its log live, stops, exports and deletes it", async () => {
    const page = await web().newPage();
    const owner = web().account("agent-2");
    const SECRET = "whsec-never-shown-again-4711";
    const slug = "web-hook-agent";
    const readAgent = async () =>
      fetch(`${web().url}/api/v1/agents/${slug}`, { headers: { "x-api-key": owner.apiKey } }).then(async (r) => ({
        status: r.status,
        text: await r.text(),
      }));

    await signInAs(page, web(), "agent-2");
    await go(page, "Hosted agents");
    const fee = page.getByTestId("deploy-fee");
    await fee.filter({ hasText: "You have 0 unspent deploy credit(s)" }).waitFor();
    expect(await page.getByRole("button", { name: "Create the agent" }).isDisabled()).to.equal(true);
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
    await page.getByRole("button", { name: "Pay the deploy fee" }).click();
    await fee.filter({ hasText: "You have 1 unspent deploy credit(s)" }).waitFor({ timeout: 60_000 });

    await page.getByRole("textbox", { name: "Slug" }).fill(slug);
    await page.getByRole("textbox", { name: "Name", exact: false }).first().fill("Web hook agent");
    await page.getByRole("combobox", { name: "Skill", exact: true }).click();
    await page.getByRole("option", { name: /\(summary\)$/ }).click();
    await page.getByRole("button", { name: "Create the agent" }).click();
    await page.getByText(`Agent ${slug} created`).waitFor({ timeout: 30_000 });
    const card = page.getByTestId(`hosted-${slug}`);
    await card.getByTestId("skill-summary").waitFor();

    // A skill installed afterwards, on the agent's card, with its secret: write-only, the page keeps no copy.
    await card.getByRole("button", { name: `Install a skill on ${slug}` }).click();
    const form = card.getByRole("form", { name: `Install a skill on ${slug}` });
    await form.getByRole("combobox", { name: "Skill to install" }).click();
    expect(
      await page.getByRole("option", { name: /\(summary\)$/ }).count(),
      "installed skills are not offered",
    ).to.equal(0);
    await page.getByRole("option", { name: /\(webhook\)$/ }).click();
    await form.getByRole("textbox", { name: "Setting: url" }).fill("https://agent.example.com/brief");
    await form.getByRole("textbox", { name: "Setting: capabilities" }).fill("klingon-verse");
    const secret = form.getByLabel("Secret: signingSecret");
    expect(await secret.getAttribute("type")).to.equal("password");
    await secret.fill(SECRET);
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
    await form.getByRole("button", { name: "Install", exact: true }).click();
    await card.getByTestId("skill-webhook").waitFor();
    await card.getByText("Installed webhook").waitFor();
    expect(await page.content()).to.not.include(SECRET);
    // And one uninstalled: its card says so, and so does the API.
    await card.getByRole("button", { name: `Uninstall summary from ${slug}` }).click();
    await card.getByTestId("skill-summary").waitFor({ state: "detached" });
    const created = await readAgent();
    expect(created.status).to.equal(200);
    expect(created.text).to.include('"skill":"webhook"').and.to.not.include('"skill":"summary"');
    expect(created.text).to.not.include(SECRET);

    // Gas for the agent's own wallet, from the devnet admin, then start it from the page.
    const wallet = JSON.parse(created.text).data.wallet as string;
    const admin = new Wallet(web().account("admin").privateKey, new JsonRpcProvider(web().devnet.rpcUrl));
    await (await admin.sendTransaction({ to: wallet, value: parseEther("1") })).wait();
    await card.getByTestId("hosted-status").filter({ hasText: "stopped" }).waitFor();
    // The log is followed live (SSE): a stopped agent has written nothing yet, so every line shown from here on
    // came through the stream.
    await card.getByTestId("log-mode").filter({ hasText: "following live" }).waitFor();
    expect(await card.getByTestId("hosted-log").innerText()).to.include("No log line yet.");
    await card.getByRole("button", { name: `Start ${slug}`, exact: true }).click();
    await card.getByTestId("hosted-status").filter({ hasText: "running" }).waitFor({ timeout: 60_000 });
    expect(await card.getByTestId("hosted-desired").innerText()).to.equal("running");
    // Its log, as the host writes it, shows on the card as it is written.
    await card.getByTestId("hosted-log").locator("p", { hasNotText: "No log line yet." }).first().waitFor();

    // A refusal says what and why, with its code.
    await card.getByRole("button", { name: `Start ${slug}`, exact: true }).click();
    const refused = card.getByRole("alert").filter({ hasText: "AGENT_RUNNING" });
    await refused.waitFor();
    expect(await refused.innerText()).to.include("stop it first");
    expect(await seriousA11yViolations(page)).to.deep.equal([]);

    await card.getByRole("button", { name: `Stop ${slug}`, exact: true }).click();
    await card.getByTestId("hosted-status").filter({ hasText: "stopped" }).waitFor({ timeout: 60_000 });

    // Key export: the owner's wallet signs the challenge; the key is shown once and is the agent wallet's.
    await card.getByRole("button", { name: `Export key of ${slug}` }).click();
    const key = (await card.getByTestId("exported-key").innerText()).trim();
    expect(key).to.match(/^0x[0-9a-f]{64}$/);
    expect(new Wallet(key).address.toLowerCase()).to.equal(wallet.toLowerCase());
    await card.getByRole("button", { name: "Dismiss" }).click();
    await card.getByTestId("exported-key").waitFor({ state: "detached" });
    expect(await page.content()).to.not.include(key.slice(2));

    await card.getByRole("button", { name: "Delete" }).click();
    const confirm = page.getByRole("alertdialog", { name: `Confirm deleting ${slug}` });
    expect(await confirm.innerText()).to.include("private key is erased");
    await confirm.getByRole("button", { name: "Keep it" }).click();
    expect((await readAgent()).status).to.equal(200);
    await card.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("button", { name: "Yes, delete and erase the key" }).click();
    await card.waitFor({ state: "detached" });
    expect((await readAgent()).status).to.equal(404);
    expect(web().pageErrors).to.deep.equal([]);
  });

  it("creates an agent with an extra capability on one of the settlement chains; its card shows both and changes the chains", async () => {
    const page = await web().newPage();
    const owner = web().account("agent-3");
    const slug = "web-chains-agent";
    await signInAs(page, web(), "agent-3");
    await go(page, "Hosted agents");
    const fee = page.getByTestId("deploy-fee");
    await fee.filter({ hasText: "You have 0 unspent deploy credit(s)" }).waitFor();
    await page.getByRole("button", { name: "Pay the deploy fee" }).click();
    await fee.filter({ hasText: "You have 1 unspent deploy credit(s)" }).waitFor({ timeout: 60_000 });

    await page.getByRole("textbox", { name: "Slug" }).fill(slug);
    await page.getByRole("textbox", { name: "Name", exact: false }).first().fill("Chains agent");
    await page.getByRole("combobox", { name: "Skill", exact: true }).click();
    await page.getByRole("option", { name: /\(summary\)$/ }).click();
    await page.getByRole("textbox", { name: "Extra capabilities" }).fill("Klingon-Verse, haiku");
    // The settlement record's chains, every one ticked until the owner unticks one.
    const base = page.getByRole("checkbox", { name: "base", exact: true });
    const arc = page.getByRole("checkbox", { name: "arc", exact: true });
    await arc.waitFor();
    expect([await base.isChecked(), await arc.isChecked()]).to.deep.equal([true, true]);
    await arc.uncheck();
    await base.uncheck();
    await page.getByText("Choose at least one chain").waitFor();
    expect(await page.getByRole("button", { name: "Create the agent" }).isDisabled()).to.equal(true);
    await base.check();
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
    await page.getByRole("button", { name: "Create the agent" }).click();
    await page.getByText(`Agent ${slug} created`).waitFor({ timeout: 30_000 });

    const card = page.getByTestId(`hosted-${slug}`);
    expect(await card.getByTestId("hosted-chains").innerText()).to.equal("base");
    expect((await card.getByTestId("hosted-capabilities").innerText()).split(", ")).to.include.members([
      "haiku",
      "klingon-verse",
      "summarise",
    ]);
    // The form is ready for the next agent: every chain ticked again.
    expect(await arc.isChecked()).to.equal(true);
    const stored = await fetch(`${web().url}/api/v1/agents/${slug}`, { headers: { "x-api-key": owner.apiKey } }).then(
      (r) => r.json(),
    );
    expect(stored.data).to.deep.include({ chains: ["base"], extraCapabilities: ["haiku", "klingon-verse"] });

    // Changed on its card: arc added.
    await card.getByRole("button", { name: `Change the chains of ${slug}` }).click();
    const chainsForm = card.getByRole("form", { name: `Chains of ${slug}` });
    const cardArc = chainsForm.getByRole("checkbox", { name: "arc", exact: true });
    expect(await cardArc.isChecked()).to.equal(false);
    await cardArc.check();
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
    await chainsForm.getByRole("button", { name: "Save chains" }).click();
    await card.getByTestId("hosted-chains").filter({ hasText: "arc, base" }).waitFor();
    const changed = await fetch(`${web().url}/api/v1/agents/${slug}`, { headers: { "x-api-key": owner.apiKey } }).then(
      (r) => r.json(),
    );
    expect(changed.data).to.deep.include({ chains: ["arc", "base"], generation: 1 });
    expect(web().pageErrors).to.deep.equal([]);
  });

  it("a provider offers, edits, deactivates and relists a service; another account rents it seeing its terms", async () => {
    const provider = web().account("agent-1"); // registered: the devnet's example agent acts as its wallet
    const page = await web().newPage();
    await signInAs(page, web(), "agent-1");
    await go(page, "My services");
    await page.getByText("You offer no service yet.").waitFor();
    await page.getByRole("textbox", { name: "Service name" }).fill("Klingon poetry");
    await page.getByRole("textbox", { name: "What it delivers" }).fill("A poem in Klingon, with its translation.");
    await page.getByRole("textbox", { name: "Price" }).fill("2.1234567");
    await page.getByRole("textbox", { name: "Delivery time (hours)" }).fill("48");
    await page.getByRole("textbox", { name: "Capabilities" }).fill("klingon-poetry");
    await page.getByRole("button", { name: "Offer it" }).click();
    await page.getByRole("alert").filter({ hasText: "The token has 6 decimal places: 2.1234567 has 7" }).waitFor();
    await page.getByRole("textbox", { name: "Price" }).fill("2.5");
    await page.getByRole("button", { name: "Offer it" }).click();
    const card = page.locator('[data-testid^="my-service-"]');
    await card.waitFor();
    expect(await card.innerText())
      .to.include("2.50 USDC")
      .and.include("48 h");
    const id = (await card.getAttribute("data-testid"))!.replace("my-service-", "");
    expect(await seriousA11yViolations(page)).to.deep.equal([]);

    await page.getByRole("button", { name: "Edit Klingon poetry" }).click();
    await page.getByRole("textbox", { name: "Price" }).first().fill("3");
    await page.getByRole("button", { name: "Save" }).click();
    await card.getByText("3.00 USDC").waitFor();
    const listed = await fetch(`${web().url}/api/v1/marketplace/services/${id}`).then((r) => r.json());
    expect(listed.data).to.include({ price_raw: 3_000_000, name: "Klingon poetry", active: true });

    // Another account rents it from the Agents page; the form shows the service's terms.
    const renter = await web().newPage();
    await signInAs(renter, web(), "poster-2");
    await go(renter, "Agents");
    await renter.getByLabel("Capabilities").fill("klingon-poetry");
    await renter.getByRole("table", { name: "Agents" }).getByTitle(provider.address.toLowerCase()).click();
    await renter.getByRole("dialog", { name: "Agent" }).getByRole("link", { name: "Rent Klingon poetry" }).click();
    const terms = renter.getByTestId("rental-terms");
    await terms.waitFor();
    expect(await terms.innerText())
      .to.include("A poem in Klingon, with its translation.")
      .and.include("Delivered within 48 h")
      .and.include("klingon-poetry");
    expect(await renter.getByTestId("rental").innerText()).to.include("3.00 USDC");
    const hash = await fillAndPostTask(renter, {
      brief: "A poem about the escrow, in Klingon.",
      capabilities: [],
      keywords: ["escrow"],
      fields: [],
    });
    const rented = await fetch(`${web().url}/api/v1/tasks/${hash}`).then((r) => r.json());
    expect(rented.data.a2aMeta.targetExecutor).to.equal(provider.address.toLowerCase());

    const serviceState = async () =>
      (await fetch(`${web().url}/api/v1/marketplace/services/${id}`).then((r) => r.json())).data.active;
    await page.getByRole("button", { name: "Deactivate Klingon poetry" }).click();
    await card.getByTestId("service-state").filter({ hasText: "inactive" }).waitFor();
    expect(await serviceState()).to.equal(false);
    // Still listed on the provider's page, and listed again from there.
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
    await page.getByRole("button", { name: "List again Klingon poetry" }).click();
    await card
      .getByTestId("service-state")
      .filter({ hasText: /^active$/ })
      .waitFor();
    expect(await serviceState()).to.equal(true);
    await page.getByRole("button", { name: "Deactivate Klingon poetry" }).waitFor();
    expect(web().pageErrors).to.deep.equal([]);
  });
});
