// Drives a running 3gs HTTP server (argv[2] is its /mcp URL, argv[3] an
// admin token) with the official MCP TypeScript SDK's
// StreamableHTTPClientTransport: it lists and calls every tool, as an
// anonymous client and as an admin, and checks what a host relies on. The
// SDK validates each structuredContent against the tool's outputSchema.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.argv[2]);
const adminToken = process.argv[3];
// The tools each tier is listed and each tool's example arguments, from the
// generated tables (the Go test passes them in THREEGS_E2E_TOOLS), so a new
// tool is listed and called here without an edit.
const expected = JSON.parse(process.env.THREEGS_E2E_TOOLS);

async function connect(token) {
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : {};
  const transport = new StreamableHTTPClientTransport(url, { requestInit });
  const client = new Client({ name: "3gs-e2e-http", version: "1.0.0" });
  await client.connect(transport);
  assert.ok(transport.sessionId, "the server opened a session");
  return { client, transport };
}

// Anonymous: the public tools this node lists, none that needs a token;
// a discoverable one called anyway answers with the token it needs.
const anon = await connect();
assert.equal(anon.client.getServerVersion().name, "three-good-sources");
const publicTools = (await anon.client.listTools()).tools.map((t) => t.name).sort();
assert.deepEqual(publicTools, [...expected.public].sort());
await assert.rejects(anon.client.callTool({ name: "explain_match", arguments: { query: "rust" } }), (err) => err.code === -31001);
await assert.rejects(anon.client.callTool({ name: "upsert_category", arguments: {} }), (err) => err.code === -32601);
await anon.transport.terminateSession();
await anon.client.close();

// Admin: every tool, each called.
const { client, transport } = await connect(adminToken);
const tools = (await client.listTools()).tools;
assert.deepEqual(tools.map((t) => t.name).sort(), [...expected.admin].sort());
const called = new Set();
async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  called.add(name);
  return res;
}

const found = await call("get_sources", { query: "how do I learn the rust programming language" });
assert.equal(found.isError, false);
assert.equal(found.structuredContent.slug, "rust-learning");
assert.equal(found.structuredContent.sources.length, 3);

const cats = await call("list_categories", {});
const before = cats.structuredContent.categories.length;

const prov = await call("get_provenance", {});
assert.equal(prov.isError, false);
assert.equal(prov.structuredContent.verification.steps[0].run, `curl -fsS -o registry.json ${url.origin}/registry`, "over HTTP the steps download the registry");

const ends = await call("get_endorsements", {});
assert.ok(Array.isArray(ends.structuredContent.endorsements));

const why = await call("explain_match", { query: "learn rust" });
assert.equal(why.isError, false);

const category = {
  name: "Learning SQLite",
  description: "Using SQLite as an embedded database: SQL, the file format and its limits.",
  query_patterns: ["learn sqlite", "sqlite tutorial", "embedded sql database"],
  sources: [
    { rank: 1, name: "SQLite documentation", url: "https://sqlite.org/docs.html", type: "documentation", why: "Its authors explain every feature." },
    { rank: 2, name: "SQLite Tutorial", url: "https://www.sqlitetutorial.net/", type: "tutorial", why: "Works through SQL with SQLite step by step." },
    { rank: 3, name: "SQLite Forum", url: "https://sqlite.org/forum/", type: "forum", why: "Where the developers answer questions." },
  ],
};
const up = await call("upsert_category", { slug: "sqlite-learning", category });
assert.equal(up.isError, false, up.content[0].text);
assert.equal((await call("list_categories", {})).structuredContent.categories.length, before + 1);
assert.equal((await call("get_sources", { query: "sqlite tutorial" })).structuredContent.slug, "sqlite-learning");

const removed = await call("remove_category", { slug: "sqlite-learning" });
assert.equal(removed.isError, false, removed.content[0].text);

const reloaded = await call("reload_registry", {});
assert.equal(reloaded.isError, false, reloaded.content[0].text);
assert.equal(reloaded.structuredContent.category_count, before);

// The proposal tools act on a proposal that exists: one is proposed (the
// schema's example) for each decision. A vote not signed by a curator the
// registry endorses is refused, as the example's is.
async function propose() {
  const p = await call("propose_change", expected.examples["propose_change"]);
  assert.equal(p.isError, false, p.content[0].text);
  return p.structuredContent.id;
}
const first = await propose();
const shown = await call("get_proposal", { id: first });
assert.equal(shown.isError, false, shown.content[0].text);
assert.equal(shown.structuredContent.proposal.status, "pending");
const pending = await call("list_proposals", { status: "pending" });
assert.ok(pending.structuredContent.proposals.some((p) => p.id === first), "list_proposals shows the new proposal");
const vote = await call("vote_proposal", { ...expected.examples["vote_proposal"], id: first });
assert.equal(vote.isError, true, "a vote by a key the registry does not endorse is refused");
const accepted = await call("accept_proposal", { id: first, reason: "e2e" });
assert.equal(accepted.isError, false, accepted.content[0].text);
const rejected = await call("reject_proposal", { id: await propose(), reason: "e2e" });
assert.equal(rejected.isError, false, rejected.content[0].text);

// Any tool not called above gets its schema's example call.
for (const t of tools) {
  if (!called.has(t.name)) {
    const res = await call(t.name, expected.examples[t.name]);
    assert.equal(res.isError, false, `${t.name} example call: ${res.content?.[0]?.text}`);
  }
}
assert.equal(called.size, tools.length, "every listed tool was called");
await transport.terminateSession();
await client.close();
console.log(`e2e http ok: ${tools.length} tools listed and called over Streamable HTTP`);
