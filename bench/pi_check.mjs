// Pi's own reading of a session file: opens FILE with SessionManager.open() from Pi's npm package and prints
// one JSON object: {leafId, lastLineId, leafIsLastLine, entries, roots, context, contextFirst, model,
// thinkingLevel, name, labels, sha256Before, sha256After, rewritten}.
// `context` is the role of every message buildSessionContext() returns at the leaf; `lastLineId` is the id on
// the file's last entry line (read after Pi opened it, so a migrated copy shows the ids Pi gave it).
// Pi rewrites pre-v3 (and headerless) files in place when it opens them, so Pi only ever sees a copy of
// FILE in a temporary directory; `rewritten` says whether it changed that copy (it must not for v3).
// Usage: node bench/pi_check.mjs FILE.jsonl
// Pi's package is taken from $PI_PACKAGE_DIR, else bench/node_modules (bench/setup_node.sh), else /tmp/pinode.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PACKAGE = join("@mariozechner", "pi-coding-agent");
const here = dirname(fileURLToPath(import.meta.url));
let work = null;

function fail(message, code) {
    // process.exit skips finally blocks, so the temp dir goes here.
    if (work) rmSync(work, { recursive: true, force: true });
    process.stderr.write(`pi_check.mjs: ${message}\n`);
    process.exit(code);
}

function packageEntry() {
    const roots = [process.env.PI_PACKAGE_DIR, join(here, "node_modules", PACKAGE), join("/tmp/pinode/node_modules", PACKAGE)];
    for (const root of roots) {
        if (root && existsSync(join(root, "dist", "index.js"))) return pathToFileURL(join(root, "dist", "index.js")).href;
    }
    return null;
}

const sha256 = (path) => createHash("sha256").update(readFileSync(path)).digest("hex");

function lastLineId(path) {
    // The last line that parses as an entry with an id; a torn last line is what Pi skips too.
    const lines = readFileSync(path, "utf8").split("\n");
    for (let i = lines.length - 1; i >= 0; i--) {
        try {
            const entry = JSON.parse(lines[i]);
            if (entry && typeof entry === "object" && entry.type !== "session" && typeof entry.id === "string") return entry.id;
        } catch {
            // not an entry: keep looking upwards
        }
    }
    return null;
}

const file = process.argv[2];
if (!file || !existsSync(file)) fail("usage: node bench/pi_check.mjs FILE.jsonl", 2);
const entry = packageEntry();
if (!entry) fail(`cannot find ${PACKAGE} (run bench/setup_node.sh or set PI_PACKAGE_DIR)`, 3);

work = mkdtempSync(join(tmpdir(), "pi-check-"));
// Pi's config reads this; pointing it into the temp dir keeps every lookup away from ~/.pi.
process.env.PI_CODING_AGENT_DIR = join(work, "agent");
try {
    const copy = join(work, "session.jsonl");
    copyFileSync(file, copy);
    const before = sha256(copy);

    const { SessionManager } = await import(entry);
    const sm = SessionManager.open(copy, join(work, "sessions"));
    const after = sha256(copy);
    // Read after opening: a pre-v3 copy has just been rewritten with the ids Pi gave it.
    const expectedLeaf = lastLineId(copy);

    const entries = sm.getEntries();
    const context = sm.buildSessionContext();
    const labels = {};
    for (const e of entries) {
        const label = sm.getLabel(e.id);
        if (label) labels[e.id] = label;
    }
    const first = context.messages[0];
    const textOf = (m) => {
        const body = m.summary ?? m.content ?? "";
        if (!Array.isArray(body)) return String(body);
        return body.map((b) => (b && b.type === "text" ? b.text : `[${b?.type}]`)).join(" ");
    };
    const result = {
        leafId: sm.getLeafId(),
        lastLineId: expectedLeaf,
        leafIsLastLine: sm.getLeafId() === expectedLeaf,
        entries: entries.length,
        roots: sm.getTree().map((node) => node.entry.id),
        context: context.messages.map((m) => m?.role ?? null),
        contextFirst: first ? { role: first.role, text: textOf(first).slice(0, 80) } : null,
        model: context.model,
        thinkingLevel: context.thinkingLevel,
        name: sm.getSessionName() ?? null,
        labels,
        sha256Before: before,
        sha256After: after,
        rewritten: before !== after,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
    rmSync(work, { recursive: true, force: true });
}
