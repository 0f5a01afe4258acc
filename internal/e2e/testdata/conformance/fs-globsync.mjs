// node:fs plus a globSync for the one pattern shape the conformance suite
// uses, "**/NAME": every file called NAME below opts.cwd, as paths relative
// to it. Any other pattern throws, so a new use in the suite is noticed
// rather than silently matching nothing.
import fs from "node:fs";
import path from "node:path";

export * from "node:fs";
export default fs;

export function globSync(pattern, opts = {}) {
  const m = /^\*\*\/([^*?[\]{}/]+)$/.exec(pattern);
  if (!m) {
    throw new Error(`fs.globSync stand-in: only "**/NAME" patterns are supported, not ${JSON.stringify(pattern)}`);
  }
  const root = opts.cwd ?? process.cwd();
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = dir ? path.join(dir, entry.name) : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name === m[1]) found.push(rel);
    }
  };
  walk("");
  return found;
}
