// Pi 1.6's branch-summary preparation for moving the leaf from OLD to TARGET on a copy of FILE:
// collectEntriesForBranchSummary, prepareBranchEntries, convertToLlm + serializeConversation, and what
// generateBranchSummary returns when nothing survives. Prints one JSON line.
// Usage: node pi16_prepare.mjs NODE_MODULES FILE OLD TARGET BUDGET
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, file, oldLeaf, target, budget] = process.argv.slice(2);
const work = mkdtempSync(join(tmpdir(), "pi16-prepare-"));
process.env.PI_CODING_AGENT_DIR = join(work, "agent");
try {
    const copy = join(work, "session.jsonl");
    copyFileSync(file, copy);
    const entry = join(resolve(modules), "@earendil-works", "pi-coding-agent", "dist", "index.js");
    const pi = await import(pathToFileURL(entry).href);
    const sm = pi.SessionManager.open(copy, work);
    const { entries } = pi.collectEntriesForBranchSummary(sm, oldLeaf, target);
    const prepared = pi.prepareBranchEntries(entries, Number(budget));
    const fail = () => {
        throw new Error("the model must not be called");
    };
    let noContent = null;
    if (prepared.messages.length === 0 && Number(budget) === 0) {
        const model = { contextWindow: 128000, reasoning: false };
        noContent = await pi.generateBranchSummary(entries, { model, apiKey: "x", streamFn: fail });
    }
    process.stdout.write(
        `${JSON.stringify({
            collected: entries.map((e) => e.id),
            roles: prepared.messages.map((m) => m.role),
            totalTokens: prepared.totalTokens,
            read: [...prepared.fileOps.read].sort(),
            written: [...prepared.fileOps.written].sort(),
            edited: [...prepared.fileOps.edited].sort(),
            serialized: pi.serializeConversation(pi.convertToLlm(prepared.messages)),
            noContent,
        })}\n`,
    );
} finally {
    rmSync(work, { recursive: true, force: true });
}
