// Writes assets/context_windows.json: the context window of every model Pi's registry knows, as
// {provider: {modelId: tokens}}, from the current npm @earendil-works/pi-ai (1.6.0, in bench/pi1/node_modules).
// pitree also reads sessions of Pi 0.x, whose models Pi 1.x partly dropped: a model only the 0.73.1 registry
// (@mariozechner/pi-ai in bench/node_modules) lists is kept with its window; where both list it, 1.6 wins.
// Both are installed by bench/setup_node.sh. Run: node bench/context_windows.mjs  (from the repository root)
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const sources = [
    join(here, "pi1", "node_modules", "@earendil-works", "pi-ai"),
    join(here, "node_modules", "@mariozechner", "pi-ai"),
];
const out = { _source: "" };
const names = [];
for (const pkg of sources) {
    if (!existsSync(join(pkg, "package.json"))) {
        process.stderr.write(`context_windows.mjs: ${pkg} is missing; run bench/setup_node.sh\n`);
        process.exit(3);
    }
    const { name, version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
    names.push(`${name} ${version}`);
    const { MODELS } = await import(pathToFileURL(join(pkg, "dist", "models.generated.js")).href);
    for (const provider of Object.keys(MODELS)) {
        out[provider] ??= {};
        for (const id of Object.keys(MODELS[provider])) {
            const w = MODELS[provider][id].contextWindow;
            if (Number.isInteger(w) && w > 0 && !(id in out[provider])) out[provider][id] = w;
        }
    }
}
out._source = `${names[0]} models.generated.js; models only ${names[1]} lists kept from it`;
const sorted = { _source: out._source };
for (const provider of Object.keys(out).filter((k) => k !== "_source").sort()) {
    sorted[provider] = Object.fromEntries(Object.keys(out[provider]).sort().map((id) => [id, out[provider][id]]));
}
writeFileSync(join(here, "..", "assets", "context_windows.json"), JSON.stringify(sorted, null, 0) + "\n");
