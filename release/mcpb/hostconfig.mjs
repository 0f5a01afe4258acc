// Prints, as JSON, the command, arguments and environment an MCP host
// starts a bundle's server with, worked out by the format's own reference
// code (getMcpConfigForManifest from @anthropic-ai/mcpb, the library
// Claude Desktop's bundle support is published as):
//
//   node hostconfig.mjs UNPACKED-BUNDLE-DIR [USER-CONFIG-JSON]
//
// USER-CONFIG-JSON is what the user entered, e.g. '{"token":"3gs_..."}';
// omitted, the user entered nothing. internal/e2e/mcpb_test.go starts the
// bundled binary exactly as this says, so the test covers the host's
// substitution of ${__dirname} and ${user_config.*}, not a copy of it.
import { readFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { getMcpConfigForManifest } from "@anthropic-ai/mcpb";

const [dir, userConfig = "{}"] = process.argv.slice(2);
if (!dir) {
  console.error("usage: node hostconfig.mjs UNPACKED-BUNDLE-DIR [USER-CONFIG-JSON]");
  process.exit(2);
}
const extensionPath = resolve(dir);
const manifest = JSON.parse(readFileSync(join(extensionPath, "manifest.json"), "utf8"));
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath,
  systemDirs: {},
  userConfig: JSON.parse(userConfig),
  pathSeparator: sep,
});
if (!config) {
  console.error("hostconfig: the host would not start this bundle (a required setting is missing)");
  process.exit(1);
}
console.log(JSON.stringify(config));
