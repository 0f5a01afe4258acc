// Loaded with `node --import` before the conformance suite. The suite
// imports fs.globSync, which Node added in 22; on Node 20 (this project's
// CI) that import fails before anything runs. The hook below hands the
// suite a stand-in fs module instead; every other module gets the real one.
import { register } from "node:module";

register("./fs-hook.mjs", import.meta.url);
