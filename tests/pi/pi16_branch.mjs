// Pi 1.6 on a copy of FILE: with `write NEW_LEAF SUMMARY DETAILS_JSON` it persists a branch summary the way
// navigateTree does (SessionManager.branchWithSummary, fromHook false, no usage) and prints the line it wrote;
// with `open` it prints where Pi continues: the leaf and the context's last message. One JSON line.
// Usage: node pi16_branch.mjs NODE_MODULES FILE open | write NEW_LEAF|null SUMMARY DETAILS_JSON
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, file, mode, newLeaf, summary, details] = process.argv.slice(2);
const work = mkdtempSync(join(tmpdir(), "pi16-branch-"));
process.env.PI_CODING_AGENT_DIR = join(work, "agent");
try {
    const copy = join(work, "session.jsonl");
    copyFileSync(file, copy);
    const entry = join(resolve(modules), "@earendil-works", "pi-coding-agent", "dist", "index.js");
    const pi = await import(pathToFileURL(entry).href);
    const sm = pi.SessionManager.open(copy, work);
    let out;
    if (mode === "write") {
        sm.branchWithSummary(newLeaf === "null" ? null : newLeaf, summary, JSON.parse(details), false, undefined);
        const lines = readFileSync(copy, "utf8").trimEnd().split("\n");
        out = { line: JSON.parse(lines[lines.length - 1]) };
    } else {
        const ctx = sm.buildSessionContext();
        const last = ctx.messages[ctx.messages.length - 1] ?? null;
        out = { leafId: sm.getLeafId(), lastRole: last?.role ?? null, lastSummary: last?.summary ?? null };
    }
    process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
    rmSync(work, { recursive: true, force: true });
}
