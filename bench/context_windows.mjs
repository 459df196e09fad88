// Writes assets/context_windows.json: the context window of every model Pi's registry knows
// (npm @mariozechner/pi-ai, installed by bench/setup_node.sh), as {provider: {modelId: tokens}}.
// Run: node bench/context_windows.mjs  (from the repository root)
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "node_modules", "@mariozechner", "pi-ai");
const version = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version;
const { MODELS } = await import(pathToFileURL(join(pkg, "dist", "models.generated.js")).href);
const out = { _source: `@mariozechner/pi-ai ${version} models.generated.js` };
for (const provider of Object.keys(MODELS).sort()) {
  const models = {};
  for (const id of Object.keys(MODELS[provider]).sort()) {
    const w = MODELS[provider][id].contextWindow;
    if (Number.isInteger(w) && w > 0) models[id] = w;
  }
  out[provider] = models;
}
writeFileSync(join(here, "..", "assets", "context_windows.json"), JSON.stringify(out, null, 0) + "\n");
