// What Pi 1.6 (npm @earendil-works/pi-coding-agent, run by Node >= 22.19) makes of one session file, as one JSON
// object, computed by Pi's own functions (dist/core/session-manager.js, compaction/compaction.js,
// usage-totals.js, agent-session.js getSessionStats; pi-ai's getCurrentSystemMessage):
//   {version, leafId, entries, name, labels, branch,
//    stats: getSessionStats() without its file/id/contextUsage, breakdown: getUsageCostBreakdown(entries),
//    leaves: {<id or "">: {messages: [[role, sourceEntryId, estimateTokens]], context: {tokens, usageTokens,
//             trailingTokens, lastUsageIndex}, model, thinkingLevel, system: {tokens, text} | null}}}
// `leaves` has the context with every entry as the leaf (key = its id) and, under "", the file's own leaf as
// SessionManager.buildSessionProjection() gives it. `--leaves ID,ID` limits the per-entry part to those ids.
// `roots`/`tree` are getTree() flattened in pre-order ({id, children} per entry, children in Pi's order).
// `--rows WIDTH` adds `rows`: Pi's /tree lines for every filter (TreeSelectorComponent rendered WIDTH wide and tall
// enough for all, ANSI stripped, the two-column cursor and the "(i/N)" status line removed), as pi_dump.mjs does.
// `--prepare OLD TARGET BUDGET` adds `prepare`: Pi's branch-summary preparation for /tree from OLD to TARGET
// (collectEntriesForBranchSummary, prepareBranchEntries, computeFileLists, serializeConversation(convertToLlm)).
// `context` is estimateProjectedContextTokens(projection, branch); `system` the collapsed system head
// (getCurrentSystemMessage over the projected messages), its estimate and getSystemMessageText.
//
// Pi writes into files it opens (a "\n" after a last line without one; pre-v3 migrations), so it only ever sees a
// copy in a temp dir, and PI_CODING_AGENT_DIR points there so nothing under ~/.pi is read.
// Usage: PITREE_PI1_NODE_MODULES=/path/to/node_modules node pi1_dump.mjs FILE.jsonl [--leaves ID,ID]
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

function fail(message, code) {
    process.stderr.write(`pi1_dump.mjs: ${message}\n`);
    process.exit(code);
}

const argv = process.argv.slice(2);
let only = null;
const at = argv.indexOf("--leaves");
if (at >= 0) {
    only = new Set((argv[at + 1] ?? "").split(",").filter(Boolean));
    argv.splice(at, 2);
}
let prepareArgs = null;
const atPrepare = argv.indexOf("--prepare");
if (atPrepare >= 0) {
    prepareArgs = argv.slice(atPrepare + 1, atPrepare + 4);
    argv.splice(atPrepare, 4);
    if (prepareArgs.length !== 3) fail("--prepare needs OLD TARGET BUDGET", 2);
}
let rowsWidth = null;
const atRows = argv.indexOf("--rows");
if (atRows >= 0) {
    rowsWidth = Number(argv[atRows + 1]);
    argv.splice(atRows, 2);
    if (!Number.isInteger(rowsWidth) || rowsWidth <= 0) fail("--rows needs WIDTH", 2);
}
const file = argv[0];
if (!file) fail("usage: node pi1_dump.mjs FILE.jsonl [--leaves ID,ID] [--rows WIDTH] [--prepare OLD TARGET BUDGET]", 2);
const modules = process.env.PITREE_PI1_NODE_MODULES;
if (!modules) fail("set PITREE_PI1_NODE_MODULES to the node_modules holding @earendil-works/pi-coding-agent", 2);
const core = join(resolve(modules), "@earendil-works", "pi-coding-agent", "dist", "core");
const aiIndex = join(resolve(modules), "@earendil-works", "pi-ai", "dist", "index.js");
for (const need of [join(core, "session-manager.js"), aiIndex]) {
    if (!existsSync(need)) fail(`${need} not found`, 3);
}
const load = (rel) => import(pathToFileURL(join(core, rel)).href);

const work = mkdtempSync(join(tmpdir(), "pi1-dump-"));
process.env.PI_CODING_AGENT_DIR = join(work, "agent");
try {
    const copy = join(work, "session.jsonl");
    copyFileSync(file, copy);
    const { SessionManager, buildSessionProjection } = await load("session-manager.js");
    const { estimateTokens, estimateProjectedContextTokens } = await load("compaction/compaction.js");
    const { getUsageCostBreakdown } = await load("usage-totals.js");
    const { AgentSession } = await load("agent-session.js");
    const { getCurrentSystemMessage, getSystemMessageText } = await import(pathToFileURL(aiIndex).href);

    const sm = SessionManager.open(copy, work);
    const entries = sm.getEntries();
    const byId = new Map(entries.map((e) => [e.id, e]));

    const view = (projection, branch) => {
        const messages = [];
        for (const { sourceEntry, messages: ms } of projection.entries) {
            for (const m of ms) messages.push([m.role, sourceEntry.id, estimateTokens(m)]);
        }
        const head = getCurrentSystemMessage(projection.messages);
        return {
            messages,
            context: estimateProjectedContextTokens(projection, branch),
            model: projection.model,
            thinkingLevel: projection.thinkingLevel,
            system: head ? { tokens: estimateTokens(head), text: getSystemMessageText(head) } : null,
        };
    };

    const leaves = { "": view(sm.buildSessionProjection(), sm.getBranch()) };
    for (const e of entries) {
        if (only !== null && !only.has(e.id)) continue;
        leaves[e.id] = view(buildSessionProjection(entries, e.id, byId), sm.getBranch(e.id));
    }

    // Pi's own getSessionStats (it reads only this.sessionManager and a few plain fields).
    const stats = AgentSession.prototype.getSessionStats.call({
        sessionManager: sm,
        sessionFile: undefined,
        sessionId: undefined,
        getContextUsage: () => undefined,
    });
    delete stats.sessionFile;
    delete stats.sessionId;
    delete stats.contextUsage;

    const labels = {};
    for (const e of entries) {
        const label = sm.getLabel(e.id);
        if (label !== undefined) labels[e.id] = label;
    }
    const roots = sm.getTree();
    const tree = [];
    const stack = [...roots].reverse();
    while (stack.length > 0) {
        const node = stack.pop();
        tree.push({ id: node.entry.id, children: node.children.map((c) => c.entry.id) });
        for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
    }
    const out = {
        version: sm.getHeader()?.version ?? null,
        leafId: sm.getLeafId(),
        entries: entries.length,
        name: sm.getSessionName() ?? null,
        labels,
        branch: sm.getBranch().map((e) => e.id),
        roots: roots.map((r) => r.entry.id),
        tree,
        stats,
        breakdown: getUsageCostBreakdown(entries),
        leaves,
    };
    if (rowsWidth !== null) {
        const pi = await import(pathToFileURL(join(core, "..", "index.js")).href);
        pi.initTheme("dark", false);
        const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g;
        out.rows = {};
        for (const mode of ["default", "no-tools", "user-only", "labeled-only", "all"]) {
            const noop = () => {};
            const selector = new pi.TreeSelectorComponent(roots, out.leafId, 10_000_000, noop, noop, noop, undefined, mode);
            const lines = selector.getTreeList().render(rowsWidth).map((l) => l.replace(ANSI, ""));
            const status = lines.pop();
            if (/^\s*No entries found/.test(lines[0] ?? "")) {
                out.rows[mode] = [];
                continue;
            }
            if (!/^\s*\(\d+\/\d+\)/.test(status)) fail(`unexpected status line ${JSON.stringify(status)}`, 4);
            out.rows[mode] = lines.map((l) => l.slice(2));
        }
    }
    if (prepareArgs) {
        const { collectEntriesForBranchSummary, prepareBranchEntries } = await load("compaction/branch-summarization.js");
        const { computeFileLists, serializeConversation } = await load("compaction/utils.js");
        const { convertToLlm } = await load("messages.js");
        const [oldLeaf, target, budget] = prepareArgs;
        const { entries: left, commonAncestorId } = collectEntriesForBranchSummary(sm, oldLeaf, target);
        const prepared = prepareBranchEntries(left, Number(budget));
        out.prepare = {
            entries: left.map((e) => e.id),
            commonAncestorId,
            roles: prepared.messages.map((m) => m.role),
            totalTokens: prepared.totalTokens,
            ...computeFileLists(prepared.fileOps),
            serialized: serializeConversation(convertToLlm(prepared.messages)),
        };
    }
    process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
    rmSync(work, { recursive: true, force: true });
}
