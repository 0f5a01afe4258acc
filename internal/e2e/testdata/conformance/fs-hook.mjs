// Module resolution hook: the conformance suite's `fs` import resolves to
// fs-globsync.mjs, but only where Node lacks fs.globSync.
import fs from "node:fs";

const suite = "/@modelcontextprotocol/conformance/";

export async function resolve(specifier, context, nextResolve) {
  const wantsFs = specifier === "fs" || specifier === "node:fs";
  if (wantsFs && typeof fs.globSync !== "function" && context.parentURL?.includes(suite)) {
    return { url: new URL("./fs-globsync.mjs", import.meta.url).href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
