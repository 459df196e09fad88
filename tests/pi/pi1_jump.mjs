// What Pi 1.6 itself does for a /tree jump to TARGET in FILE, for comparing with what pitree appends:
//   {oldLeafId, leafId, editorText, prepare: {entries, commonAncestorId, readFiles, modifiedFiles, totalTokens},
//    context: [[role, sourceEntryId, estimateTokens]], summary?: {line, context}}
// `leafId`/`editorText`/`context`: Pi's own AgentSession.navigateTree without a summary (run on a stand-in `this`
// holding the SessionManager: no model, no extensions), which moves the leaf in memory only.
// `prepare`: collectEntriesForBranchSummary + prepareBranchEntries(BUDGET) + computeFileLists, the file lists Pi
// puts in the summary's details. With `--summary TEXT`, `summary.line` is the entry Pi's branchWithSummary appends
// for that text and those details (read back from the file), and `summary.context` Pi's context after it.
// Pi works on copies in a temp dir; PI_CODING_AGENT_DIR points there.
// Usage: PITREE_PI1_NODE_MODULES=... node pi1_jump.mjs FILE TARGET BUDGET [--summary TEXT]
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

function fail(message, code) {
    process.stderr.write(`pi1_jump.mjs: ${message}\n`);
    process.exit(code);
}

const argv = process.argv.slice(2);
let summaryText = null;
const at = argv.indexOf("--summary");
if (at >= 0) {
    summaryText = argv[at + 1];
    argv.splice(at, 2);
    if (typeof summaryText !== "string") fail("--summary needs TEXT", 2);
}
const [file, target, budget] = argv;
if (!file || !target || budget === undefined) fail("usage: node pi1_jump.mjs FILE TARGET BUDGET [--summary TEXT]", 2);
const modules = process.env.PITREE_PI1_NODE_MODULES;
if (!modules) fail("set PITREE_PI1_NODE_MODULES to the node_modules holding @earendil-works/pi-coding-agent", 2);
const core = join(resolve(modules), "@earendil-works", "pi-coding-agent", "dist", "core");
if (!existsSync(join(core, "session-manager.js"))) fail(`${core}/session-manager.js not found`, 3);
const load = (rel) => import(pathToFileURL(join(core, rel)).href);

const work = mkdtempSync(join(tmpdir(), "pi1-jump-"));
process.env.PI_CODING_AGENT_DIR = join(work, "agent");
try {
    const { SessionManager } = await load("session-manager.js");
    const { estimateTokens } = await load("compaction/compaction.js");
    const { collectEntriesForBranchSummary, prepareBranchEntries } = await load("compaction/branch-summarization.js");
    const { computeFileLists } = await load("compaction/utils.js");
    const { AgentSession } = await load("agent-session.js");

    const open = (name) => {
        const copy = join(work, name);
        copyFileSync(file, copy);
        return [SessionManager.open(copy, work), copy];
    };
    const contextOf = (sm) =>
        sm.buildSessionProjection().entries.flatMap(({ sourceEntry, messages }) =>
            messages.map((m) => [m.role, sourceEntry.id, estimateTokens(m)]),
        );

    const [sm] = open("navigate.jsonl");
    const oldLeafId = sm.getLeafId();
    const collected = collectEntriesForBranchSummary(sm, oldLeafId, target);
    const prepared = prepareBranchEntries(collected.entries, Number(budget));
    const prepare = {
        entries: collected.entries.map((e) => e.id),
        commonAncestorId: collected.commonAncestorId,
        totalTokens: prepared.totalTokens,
        ...computeFileLists(prepared.fileOps),
    };

    // Pi's navigateTree reads only these members when it is not asked for a summary.
    const session = {
        isStreaming: false,
        _promptPreflightCount: 0,
        isCompacting: false,
        model: undefined,
        sessionManager: sm,
        _extensionRunner: { hasHandlers: () => false, emit: async () => undefined },
        _refreshFinalizedContext() {},
        _restoreToolsFromTranscript() {},
        _resolveIdleWaitIfIdle() {},
    };
    const result = await AgentSession.prototype.navigateTree.call(session, target, { summarize: false });
    const out = {
        oldLeafId,
        leafId: sm.getLeafId(),
        editorText: result.editorText ?? null,
        prepare,
        context: contextOf(sm),
    };
    if (summaryText !== null) {
        const [sm2, copy2] = open("summary.jsonl");
        const details = { readFiles: prepare.readFiles, modifiedFiles: prepare.modifiedFiles };
        sm2.branchWithSummary(out.leafId, summaryText, details, false, undefined);
        const lines = readFileSync(copy2, "utf8").trimEnd().split("\n");
        out.summary = { line: JSON.parse(lines[lines.length - 1]), context: contextOf(sm2) };
    }
    process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
    rmSync(work, { recursive: true, force: true });
}
