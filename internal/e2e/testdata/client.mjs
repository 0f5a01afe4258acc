// Drives the 3gs binary (argv[2]) with the official MCP TypeScript SDK over
// stdio and checks what a real host would rely on. The SDK itself validates
// every structuredContent against the tool's outputSchema.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const binary = process.argv[2];
const transport = new StdioClientTransport({ command: binary, args: ["serve"], stderr: "pipe" });
const client = new Client({ name: "3gs-e2e", version: "1.0.0" });
await client.connect(transport);

const info = client.getServerVersion();
assert.equal(info.name, "three-good-sources");

// The tools each tier is listed, from the generated tables (the Go test
// passes them in THREEGS_E2E_TOOLS), so a new tool needs no edit here.
const expected = JSON.parse(process.env.THREEGS_E2E_TOOLS);
const { tools } = await client.listTools();
// Without a token: the public tools this node lists (a plain serve: no
// peers, no proposals); no tool that needs a token.
assert.deepEqual(tools.map((t) => t.name).sort(), [...expected.public].sort());
for (const t of tools) {
  assert.equal(t.inputSchema.type, "object", `${t.name} input schema`);
  assert.equal(t.annotations.readOnlyHint, expected.readOnly[t.name], `${t.name} readOnlyHint`);
  assert.equal(t.annotations.openWorldHint, false, `${t.name} openWorldHint`);
}

const found = await client.callTool({ name: "get_sources", arguments: { query: "how do I learn the rust programming language" } });
assert.equal(found.isError, false);
assert.equal(found.structuredContent.slug, "rust-learning");
assert.equal(found.structuredContent.sources.length, 3);
assert.deepEqual(found.structuredContent.sources.map((s) => s.rank), [1, 2, 3]);
assert.match(found.content[0].text, /^Category: Learning Rust/);

// A topic the registry has no word for: no candidates, said plainly, and
// the catalog listed for the agent to pick from or decline.
const unrelated = await client.callTool({ name: "get_sources", arguments: { query: "quantum physics supercollider" } });
assert.equal(unrelated.isError, true);
assert.match(unrelated.content[0].text, /^No category matches query 'quantum physics supercollider' confidently/);
assert.match(unrelated.content[0].text, /so there are no candidates/);
assert.equal(unrelated.structuredContent.candidates, undefined, "no candidates without evidence");

const missed = await client.callTool({ name: "get_sources", arguments: { query: "secure my home network" } });
assert.equal(missed.isError, true);
assert.match(missed.content[0].text, /^No category matches query 'secure my home network' confidently/);
assert.match(missed.content[0].text, /call get_sources with its slug/);
const candidates = missed.structuredContent.candidates;
assert.ok(candidates.length >= 1 && candidates.length <= 5, "up to five candidates");
assert.equal(missed.structuredContent.available_categories, undefined, "no list of every slug");

// The second call of the two-call flow: the agent's pick, by slug.
const picked = await client.callTool({ name: "get_sources", arguments: { slug: candidates[0].slug } });
assert.equal(picked.isError, false);
assert.equal(picked.structuredContent.slug, candidates[0].slug);
assert.equal(picked.structuredContent.score, 1);
assert.equal(picked.structuredContent.sources.length, 3);

const cats = await client.callTool({ name: "list_categories", arguments: {} });
assert.equal(cats.isError, false);
assert.ok(cats.structuredContent.categories.length >= 12);

const prov = await client.callTool({ name: "get_provenance", arguments: {} });
assert.equal(prov.isError, false);
assert.match(prov.structuredContent.registry_sha256, /^[0-9a-f]{64}$/);
assert.equal(prov.structuredContent.verified, true, "the embedded registry is served signed and verified");
assert.match(prov.structuredContent.verification.command, /^3gs verify --pubkey [ybndrfg8ejkmcpqxot1uwisza345h769]{52}$/);

const ends = await client.callTool({ name: "get_endorsements" });
assert.equal(ends.isError, false);
assert.ok(Array.isArray(ends.structuredContent.endorsements));

await assert.rejects(
  client.callTool({ name: "get_sources", arguments: { query: "rust", Query: "go" } }),
  (err) => err.code === -32602,
);
await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (err) => err.code === -32601);
await assert.rejects(client.callTool({ name: "upsert_category", arguments: {} }), (err) => err.code === -32601);
await assert.rejects(client.callTool({ name: "explain_match", arguments: { query: "rust" } }), (err) => err.code === -31001 && err.data.required_tier === "user");

await client.close();
console.log(`e2e ok: ${tools.length} tools, server ${info.name} ${info.version}`);
