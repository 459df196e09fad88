// What the real Pi (npm @mariozechner/pi-coding-agent) makes of one session file, as one JSON object:
//   {version, leafId, entries, roots, tree: [{id, children}], branch, context: {roles, entryIds, model,
//    thinkingLevel}, labels, name, rows: {<filter>: [line, ...]}}
// `rows` are Pi's /tree lines (TreeSelectorComponent's list, rendered wide and tall, ANSI stripped, the
// two-column cursor and the "(i/N)" status line removed), one list per filter mode.
//
// Pi rewrites pre-v3 files in place when it opens them, so Pi only ever sees a copy in a temp dir, and
// PI_CODING_AGENT_DIR points into that dir so nothing is looked up under ~/.pi.
// With `--prepare OLD TARGET BUDGET` it adds `prepare`: Pi's branch-summary preparation for moving the leaf
// from OLD to TARGET (collectEntriesForBranchSummary, prepareBranchEntries, serializeConversation).
// Usage: PITREE_PI_NODE_MODULES=/path/to/node_modules node tests/pi/pi_dump.mjs FILE.jsonl [WIDTH] [--prepare ...]
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"];
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g;

function fail(message, code) {
    process.stderr.write(`pi_dump.mjs: ${message}\n`);
    process.exit(code);
}

const argv = process.argv.slice(2);
let prepareArgs = null;
const at = argv.indexOf("--prepare");
if (at >= 0) {
    prepareArgs = argv.slice(at + 1, at + 4);
    argv.splice(at, 4);
    if (prepareArgs.length !== 3) fail("--prepare needs OLD TARGET BUDGET", 2);
}
const file = argv[0];
const width = Number(argv[1] ?? 2000);
if (!file) fail("usage: node pi_dump.mjs FILE.jsonl [WIDTH] [--prepare OLD TARGET BUDGET]", 2);
const modules = process.env.PITREE_PI_NODE_MODULES;
if (!modules) fail("set PITREE_PI_NODE_MODULES to the node_modules holding @mariozechner/pi-coding-agent", 2);
const entry = join(resolve(modules), "@mariozechner", "pi-coding-agent", "dist", "index.js");
if (!existsSync(entry)) fail(`${entry} not found`, 3);

const work = mkdtempSync(join(tmpdir(), "pi-dump-"));
process.env.PI_CODING_AGENT_DIR = join(work, "agent");
try {
    const copy = join(work, "session.jsonl");
    copyFileSync(file, copy);
    const pi = await import(pathToFileURL(entry).href);
    pi.initTheme("dark", false);

    const sm = pi.SessionManager.open(copy, work);
    const header = sm.getHeader();
    const entries = sm.getEntries();
    const roots = sm.getTree();
    const leafId = sm.getLeafId();

    // The tree flattened in pre-order, children in Pi's order (iterative: deep chains are fine).
    const tree = [];
    const stack = [...roots].reverse();
    while (stack.length > 0) {
        const node = stack.pop();
        tree.push({ id: node.entry.id, children: node.children.map((c) => c.entry.id) });
        for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
    }

    // Context messages back to the entries they came from: message entries by identity, the rest by the
    // fields Pi copies into the message it creates.
    const ctx = sm.buildSessionContext();
    const branch = sm.getBranch();
    const entryIds = ctx.messages.map((m) => {
        for (const e of branch) {
            if (e.type === "message" && e.message === m) return e.id;
        }
        for (const e of branch) {
            const t = new Date(e.timestamp).getTime();
            if (m.timestamp !== t) continue;
            if (m.role === "compactionSummary" && e.type === "compaction" && e.summary === m.summary) return e.id;
            if (m.role === "branchSummary" && e.type === "branch_summary" && e.summary === m.summary) return e.id;
            if (m.role === "custom" && e.type === "custom_message" && e.content === m.content) return e.id;
        }
        return null;
    });

    const labels = {};
    for (const e of entries) {
        const label = sm.getLabel(e.id);
        if (label !== undefined) labels[e.id] = label;
    }

    const rows = {};
    for (const mode of FILTERS) {
        const noop = () => {};
        const selector = new pi.TreeSelectorComponent(roots, leafId, 10_000_000, noop, noop, noop, undefined, mode);
        const lines = selector.getTreeList().render(width).map((l) => l.replace(ANSI, ""));
        const status = lines.pop(); // "  (i/N) [mode]"
        if (/^\s*No entries found/.test(lines[0] ?? "")) {
            rows[mode] = [];
            continue;
        }
        if (!/^\s*\(\d+\/\d+\)/.test(status)) fail(`unexpected status line ${JSON.stringify(status)}`, 4);
        rows[mode] = lines.map((l) => l.slice(2)); // the cursor column: "› " on the selected row, else "  "
    }

    const out = {
        version: header?.version ?? null,
        leafId,
        entries: entries.length,
        roots: roots.map((r) => r.entry.id),
        tree,
        branch: branch.map((e) => e.id),
        types: entries.map((e) => (e.type === "message" ? `message:${e.message?.role}` : e.type)),
        context: {
            roles: ctx.messages.map((m) => m.role),
            entryIds,
            tokens: ctx.messages.map((m) => pi.estimateTokens(m)),
            model: ctx.model,
            thinkingLevel: ctx.thinkingLevel,
        },
        labels,
        name: sm.getSessionName() ?? null,
        rows,
    };
    if (prepareArgs) {
        const [oldLeaf, target, budget] = prepareArgs;
        const { entries: left, commonAncestorId } = pi.collectEntriesForBranchSummary(sm, oldLeaf, target);
        const prepared = pi.prepareBranchEntries(left, Number(budget));
        out.prepare = {
            entries: left.map((e) => e.id),
            commonAncestorId,
            roles: prepared.messages.map((m) => m.role),
            totalTokens: prepared.totalTokens,
            read: [...prepared.fileOps.read].sort(),
            written: [...prepared.fileOps.written].sort(),
            edited: [...prepared.fileOps.edited].sort(),
            serialized: pi.serializeConversation(pi.convertToLlm(prepared.messages)),
        };
    }
    process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
    rmSync(work, { recursive: true, force: true });
}
