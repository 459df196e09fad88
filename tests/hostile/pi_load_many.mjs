// Pi (npm @mariozechner/pi-coding-agent) opening many session files in one process, for the crash-safety test.
// Usage: PITREE_PI_NODE_MODULES=/path/to/node_modules node pi_load_many.mjs FILE...
// Prints one JSON array: per file {file, entries, leafId, branch, rewritten}. Pi only ever sees a copy in a
// temporary folder (it rewrites some files in place), and PI_CODING_AGENT_DIR points there too.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.PITREE_PI_NODE_MODULES;
if (!modules) {
    process.stderr.write("set PITREE_PI_NODE_MODULES\n");
    process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), "pi-load-many-"));
process.env.PI_CODING_AGENT_DIR = join(work, "agent");
try {
    const pi = await import(pathToFileURL(join(resolve(modules), "@mariozechner", "pi-coding-agent", "dist", "index.js")).href);
    const out = [];
    for (const [i, file] of process.argv.slice(2).entries()) {
        const copy = join(work, `s${i}.jsonl`);
        copyFileSync(file, copy);
        const before = readFileSync(copy);
        const sm = pi.SessionManager.open(copy, work);
        out.push({
            file,
            entries: sm.getEntries().length,
            leafId: sm.getLeafId(),
            branch: sm.getBranch().map((e) => e.id),
            rewritten: !before.equals(readFileSync(copy)),
        });
    }
    process.stdout.write(JSON.stringify(out) + "\n");
} finally {
    rmSync(work, { recursive: true, force: true });
}
