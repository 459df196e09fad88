// Writes Pi 1.6 sessions with Pi's own SessionManager (npm @earendil-works/pi-coding-agent 1.6, Node >= 22.19), so
// every entry is as Pi itself writes it. Prints {file, ids: {name: entryId}} as one JSON line.
// Scenarios:
//   kitchen      every entry type and field of Pi 1.x: system messages (sections, toolsAdded/toolsRemoved patches),
//                context_edit omit/replace on user, assistant, toolResult and custom_message targets (and one on
//                another branch), usage entries, compaction with systemMessage + usage, an older compaction in the
//                kept range, retain-none, branch_summary with usage, branch()/resetLeaf(), labels set and cleared,
//                session_info set and cleared, images (user, toolResult, custom, assistant), null content (user,
//                assistant, system, custom_message), toolResult usage/nestedCalls, bashExecution
//                with excludeFromContext, assistant responseModel/thinkingLevel/durationMs and every stopReason.
//   nulls        null content on every role Pi's projection tolerates it on, custom_message included (Pi's own
//                /tree throws on that one, so its rows are not compared).
//   named        a short session whose name is set (and kept), with labels: the name/label checks need a set one.
//   random:SEED:N  N random SessionManager calls (seeded), branching anywhere.
// The clock is simulated (1 s per entry from 2026-11-01) so timestamps are distinct and ordered as in real use.
// Usage: PITREE_PI1_NODE_MODULES=/path/to/node_modules node pi1_gen.mjs SCENARIO OUT.jsonl
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

function fail(message, code) {
    process.stderr.write(`pi1_gen.mjs: ${message}\n`);
    process.exit(code);
}

const [scenario, out] = process.argv.slice(2);
if (!scenario || !out) fail("usage: node pi1_gen.mjs kitchen|nulls|named|random:SEED:N OUT.jsonl", 2);
if (existsSync(out)) fail(`${out} exists`, 2);
const modules = process.env.PITREE_PI1_NODE_MODULES;
if (!modules) fail("set PITREE_PI1_NODE_MODULES to the node_modules holding @earendil-works/pi-coding-agent", 2);
const sessionManagerJs = join(resolve(modules), "@earendil-works", "pi-coding-agent", "dist", "core", "session-manager.js");
if (!existsSync(sessionManagerJs)) fail(`${sessionManagerJs} not found`, 3);

// A clock that ticks one second per reading: `new Date()` without arguments and Date.now() use it.
let clock = Date.UTC(2026, 10, 1, 9, 0, 0);
const RealDate = Date;
globalThis.Date = class extends RealDate {
    constructor(...args) {
        if (args.length === 0) {
            clock += 1000;
            super(clock);
        } else {
            super(...args);
        }
    }
    static now() {
        clock += 1000;
        return clock;
    }
};

const agentDir = mkdtempSync(join(tmpdir(), "pi1-gen-"));
process.env.PI_CODING_AGENT_DIR = agentDir;
const { SessionManager } = await import(pathToFileURL(sessionManagerJs).href);

const now = () => clock;
function usage(input, output, cacheRead = 0, cacheWrite = 0, cost = 0, totalTokens = undefined) {
    return {
        input,
        output,
        cacheRead,
        cacheWrite,
        totalTokens: totalTokens ?? input + output + cacheRead + cacheWrite,
        cost: { input: cost / 2, output: cost / 2, cacheRead: 0, cacheWrite: 0, total: cost },
    };
}
const TOOLS = {
    read: { name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } } },
    bash: { name: "bash", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } } } },
    grep: { name: "grep", description: "Search files", parameters: { type: "object", properties: { pattern: { type: "string" } } } },
};
const IMAGE = { type: "image", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==", mimeType: "image/png" };

function system(content, sections, toolsAdded, toolsRemoved) {
    return {
        role: "system",
        content,
        ...(sections ? { sections } : {}),
        ...(toolsAdded ? { toolsAdded } : {}),
        ...(toolsRemoved ? { toolsRemoved } : {}),
        timestamp: now(),
    };
}
const user = (content) => ({ role: "user", content, timestamp: now() });
function assistant(content, opts = {}) {
    return {
        role: "assistant",
        content,
        api: "anthropic-messages",
        provider: opts.provider ?? "anthropic",
        model: opts.model ?? "claude-sonnet-4-5",
        ...(opts.responseModel ? { responseModel: opts.responseModel } : {}),
        ...(opts.thinkingLevel ? { thinkingLevel: opts.thinkingLevel } : {}),
        ...(opts.durationMs !== undefined ? { durationMs: opts.durationMs } : {}),
        usage: opts.usage ?? usage(0, 0),
        stopReason: opts.stopReason ?? "stop",
        ...(opts.errorMessage ? { errorMessage: opts.errorMessage } : {}),
        timestamp: now(),
    };
}
function toolResult(toolCallId, toolName, content, opts = {}) {
    return {
        role: "toolResult",
        toolCallId,
        toolName,
        content,
        isError: opts.isError ?? false,
        ...(opts.usage ? { usage: opts.usage } : {}),
        ...(opts.nestedCalls ? { nestedCalls: opts.nestedCalls } : {}),
        timestamp: now(),
    };
}
function bash(command, output, opts = {}) {
    return {
        role: "bashExecution",
        command,
        output,
        exitCode: opts.exitCode ?? 0,
        cancelled: false,
        truncated: opts.truncated ?? false,
        ...(opts.fullOutputPath ? { fullOutputPath: opts.fullOutputPath } : {}),
        ...(opts.excludeFromContext ? { excludeFromContext: true } : {}),
        timestamp: now(),
    };
}
const text = (t) => ({ type: "text", text: t });

function kitchen(sm) {
    const ids = {};
    ids.mc1 = sm.appendModelChange("anthropic", "claude-sonnet-4-5");
    ids.tl1 = sm.appendThinkingLevelChange("high");
    ids.s1 = sm.appendMessage(
        system("", { preamble: "You are Pi, a coding agent.", cwd: "Working in /w/project", skills: "Skills: none" }, [
            TOOLS.read,
            TOOLS.bash,
        ]),
    );
    ids.u1 = sm.appendMessage(user([text("Build the weather CLI; the sketch is attached."), IMAGE]));
    ids.a1 = sm.appendMessage(
        assistant(
            [
                { type: "thinking", thinking: "The user wants a CLI. Read the sketch first." },
                text("Reading the current file."),
                { type: "toolCall", id: "call-1", name: "read", arguments: { path: "weather/cli.py" } },
            ],
            {
                stopReason: "toolUse",
                responseModel: "claude-sonnet-4-5-20250929",
                thinkingLevel: "high",
                durationMs: 2100,
                usage: usage(1200, 80, 300, 50, 0.0123),
            },
        ),
    );
    ids.r1 = sm.appendMessage(
        toolResult("call-1", "read", [text("import sys\nprint('weather')\n"), IMAGE], {
            usage: usage(10, 3, 0, 3, 0.0004),
            nestedCalls: { calls: [{ id: "n1", name: "bash", arguments: { command: "ls" }, status: "ok", durationMs: 5 }], complete: true },
        }),
    );
    ids.a2 = sm.appendMessage(assistant([text("The file prints a placeholder; I will replace it.")], { usage: usage(1400, 40, 1300, 0, 0.004) }));
    ids.bx1 = sm.appendMessage(bash("git status --short", "M weather/cli.py", { excludeFromContext: true }));
    ids.bx2 = sm.appendMessage(bash("pytest -q", "x".repeat(900), { exitCode: 1, truncated: true, fullOutputPath: "/tmp/pi-out.txt" }));
    ids.s2 = sm.appendMessage(system("Keep answers short.", { cwd: null, skills: "Skills: weather" }, [TOOLS.grep], [{ name: "bash" }]));
    ids.u2 = sm.appendMessage(user("Now add a cache."));
    ids.us1 = sm.appendUsage("cache_warm", "anthropic", "claude-sonnet-4-5", usage(0, 0, 2000, 0, 0.0006)).id;
    ids.us2 = sm.appendUsage("embedding", "openai", "text-embedding-3-small", usage(500, 0, 0, 0, 0.00001), "index refresh").id;
    ids.cm1 = sm.appendCustomMessageEntry("note", [text("Remember: stdlib only."), IMAGE], true, { source: "ext" });
    ids.s0 = sm.appendMessage({ ...system(null, { empty: "" }), content: null });
    ids.ai = sm.appendMessage(assistant([text("An image answer."), IMAGE], { usage: usage(10, 5, 0, 0, 0.0001) }));
    ids.cu1 = sm.appendCustomEntry("ext-state", { step: 2 });
    ids.a3 = sm.appendMessage(assistant(null, { usage: usage(1500, 0, 0, 0, 0.001), stopReason: "toolUse" }));
    ids.u3 = sm.appendMessage(user(null));
    ids.a4 = sm.appendMessage(assistant([], { stopReason: "error", errorMessage: "overloaded_error (HTTP 529)", usage: usage(0, 0) }));
    ids.a5 = sm.appendMessage(assistant([text("partial")], { stopReason: "aborted", usage: usage(900, 4, 0, 0, 0.0009) }));
    ids.a6 = sm.appendMessage(assistant([text("Deferred until the tool is back.")], { stopReason: "deferred", usage: usage(1600, 9, 0, 0, 0.0011) }));
    ids.e1 = sm.appendContextEdit(ids.u1, { content: "Build the weather CLI (sketch removed)." });
    ids.e2 = sm.appendContextEdit(ids.a1, { content: "I read weather/cli.py." });
    ids.e3 = sm.appendContextEdit(ids.r1, null);
    ids.e4 = sm.appendContextEdit(ids.cm1, { content: [text("Remember: stdlib only, no httpx.")] });
    ids.e5 = sm.appendContextEdit(ids.a1, { content: [text("I read weather/cli.py (second edit).")] });
    ids.e6 = sm.appendContextEdit(ids.a2, null);
    ids.lb1 = sm.appendLabelChange(ids.u1, "start");
    ids.lb2 = sm.appendLabelChange(ids.a2, "plan");
    ids.si1 = sm.appendSessionInfo("  Weather\nCLI  ");
    ids.a7 = sm.appendMessage(assistant([text("Cache added under ~/.cache/weather.")], { usage: usage(1700, 30, 1500, 20, 0.0052) }));
    ids.lb3 = sm.appendLabelChange(ids.u1, "");
    ids.lb4 = sm.appendLabelChange(ids.u2, "temporary");
    ids.lb5 = sm.appendLabelChange(ids.u2, undefined); // no label field at all: "[label: (cleared)]" in Pi's tree
    ids.main1 = sm.getLeafId();

    // A branch off a2 whose edit only applies there; a different model with a responseModel.
    sm.branch(ids.a2);
    ids.u4 = sm.appendMessage(user("Try asyncio instead."));
    ids.mc2 = sm.appendModelChange("openai", "gpt-5");
    ids.a8 = sm.appendMessage(
        assistant([text("Not worth it for one request.")], { provider: "openai", model: "gpt-5", responseModel: "gpt-5-2025-08-07", usage: usage(800, 25, 0, 0, 0.002) }),
    );
    ids.e7 = sm.appendContextEdit(ids.u4, { content: "Try asyncio? (edited on the side branch)" });
    ids.e8 = sm.appendContextEdit(ids.u1, null);
    ids.side1 = sm.getLeafId();

    // Back to the main line with a summary of the side branch (fromId = the abandoned leaf), with usage.
    sm.branch(ids.main1);
    ids.bs1 = sm.branchWithSummary(ids.a7, "The user tried asyncio; rejected.", { readFiles: ["weather/cli.py"], modifiedFiles: [] }, false, usage(300, 7, 0, 0, 0.0003));
    ids.bs2 = sm.branchWithSummary(ids.bs1, "", undefined, false, undefined);
    ids.u5 = sm.appendMessage(user("Now retries."));
    ids.a9 = sm.appendMessage(assistant([text("Retries with backoff added.")], { usage: usage(1900, 50, 1800, 0, 0.006) }));
    // Compaction with its checkpoint (Pi fills systemMessage from the projection) and its own usage.
    ids.c1 = sm.appendCompaction("## Goal\nWeather CLI with cache and retries.", ids.u5, 9000, { readFiles: ["weather/cli.py"], modifiedFiles: ["weather/cache.py"] }, false, usage(4000, 200, 0, 0, 0.02));
    ids.u6 = sm.appendMessage(user("Add --units."));
    ids.s3 = sm.appendMessage(system("", { units: "Units: metric by default." }, undefined, [{ name: "grep" }]));
    ids.a10 = sm.appendMessage(assistant([text("--units imperial works.")], { usage: usage(2100, 60, 0, 0, 0.007) }));
    ids.e9 = sm.appendContextEdit(ids.u5, { content: "Now retries (edited after the compaction)." });
    // A second compaction keeping from before the first: c1 sits in its kept range and must add nothing.
    ids.c2 = sm.appendCompaction("## Goal\nSecond summary.", ids.u5, 12000, undefined, false, undefined);
    ids.u7 = sm.appendMessage(user("Ship it."));
    ids.a11 = sm.appendMessage(assistant([text("Shipped.")], { usage: usage(2300, 10, 2000, 0, 0.0031), thinkingLevel: "high" }));
    ids.main2 = sm.getLeafId();

    // Retain-none on a branch off u6 (firstKeptEntryId = its own id).
    sm.branch(ids.u6);
    ids.c3 = sm.appendCompaction("Everything so far, summarized.", null, 5000, undefined, true, usage(100, 10, 0, 0, 0.0002));
    ids.u8 = sm.appendMessage(user("Continue from nothing."));
    ids.tl2 = sm.appendThinkingLevelChange("max");
    ids.a12 = sm.appendMessage(assistant([text("Continuing.")], { usage: usage(300, 5, 0, 0, 0.0001) }));

    // A fresh root (resetLeaf), then the name cleared: the file's leaf ends up here.
    sm.resetLeaf();
    ids.u9 = sm.appendMessage(user("Start over: a different tool."));
    ids.si2 = sm.appendSessionInfo("");
    ids.a13 = sm.appendMessage(assistant([text("Starting over.")], { usage: usage(50, 5, 0, 0, 0) }));
    return ids;
}

function nulls(sm) {
    const ids = {};
    ids.s1 = sm.appendMessage({ ...system(null), content: null });
    ids.u1 = sm.appendMessage(user(null));
    ids.a1 = sm.appendMessage(assistant(null, { usage: usage(10, 1, 0, 0, 0.00001) }));
    ids.cm1 = sm.appendCustomMessageEntry("empty-note", null, false);
    ids.r1 = sm.appendMessage({ ...toolResult("c1", "read", null), content: null });
    ids.e1 = sm.appendContextEdit(ids.cm1, { content: "filled by an edit" });
    ids.u2 = sm.appendMessage(user("after the nulls"));
    return ids;
}

function named(sm) {
    const ids = {};
    ids.s1 = sm.appendMessage(system("Be brief.", undefined, [TOOLS.read]));
    ids.u1 = sm.appendMessage(user("Hello"));
    ids.a1 = sm.appendMessage(assistant([text("Hi.")], { usage: usage(20, 2, 0, 0, 0.0001) }));
    ids.si1 = sm.appendSessionInfo("first name");
    ids.lb1 = sm.appendLabelChange(ids.u1, "greeting");
    ids.u2 = sm.appendMessage(user("Again"));
    ids.a2 = sm.appendMessage(assistant([text("Hi again.")], { usage: usage(30, 3, 20, 0, 0.0001, 0) }));
    ids.si2 = sm.appendSessionInfo("final\nname");
    ids.lb2 = sm.appendLabelChange(ids.a2, "second");
    ids.lb3 = sm.appendLabelChange(ids.a2, "second, renamed");
    return ids;
}

// A small seeded PRNG (mulberry32): the same seed gives the same sequence of calls.
function rng(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

function random(sm, seed, n) {
    const r = rng(seed);
    const pick = (xs) => xs[Math.floor(r() * xs.length)];
    const all = [];
    let call = 0;
    const add = (id) => {
        all.push(id);
        return id;
    };
    add(sm.appendMessage(system("base", { a: "section a", b: "section b" }, [TOOLS.read, TOOLS.bash])));
    add(sm.appendMessage(user("start")));
    const weights = [
        ["user", 18], ["assistant", 18], ["tools", 10], ["system", 4], ["edit", 8], ["usage", 3], ["compaction", 3],
        ["branch", 6], ["summary", 3], ["label", 3], ["name", 2], ["model", 2], ["thinking", 2], ["custom", 2],
        ["bash", 3], ["reset", 1],
    ];
    const total = weights.reduce((s, [, w]) => s + w, 0);
    for (let i = 0; i < n; i++) {
        let x = r() * total;
        let kind = weights[0][0];
        for (const [k, w] of weights) {
            if ((x -= w) < 0) {
                kind = k;
                break;
            }
        }
        const branch = sm.getBranch();
        if (kind === "user") add(sm.appendMessage(user(r() < 0.1 ? [text(`u${i}`), IMAGE] : `user ${i} `.repeat(1 + Math.floor(r() * 8)))));
        else if (kind === "assistant") {
            const stop = pick(["stop", "stop", "stop", "error", "aborted", "deferred"]);
            const u = r() < 0.15 ? usage(0, 0) : usage(100 + i * 10, 5 + (i % 7), Math.floor(r() * 500), 0, r() / 100, r() < 0.2 ? 0 : undefined);
            const model = pick([["anthropic", "claude-sonnet-4-5"], ["openai", "gpt-5"]]);
            add(sm.appendMessage(assistant([text(`answer ${i} `.repeat(1 + Math.floor(r() * 20)))], { stopReason: stop, usage: u, provider: model[0], model: model[1], responseModel: r() < 0.3 ? `${model[1]}-dated` : undefined })));
        } else if (kind === "tools") {
            const id = `call-${++call}`;
            add(sm.appendMessage(assistant([{ type: "toolCall", id, name: "read", arguments: { path: `f${call}.py` } }], { stopReason: "toolUse", usage: usage(200 + i, 10, 0, 0, 0.001) })));
            add(sm.appendMessage(toolResult(id, "read", [text(`contents ${call} `.repeat(5))], r() < 0.3 ? { usage: usage(1, 1, 0, 0, 0.00001) } : {})));
        } else if (kind === "system") {
            add(sm.appendMessage(system(r() < 0.5 ? "" : `patch ${i}`, { [pick(["a", "b", "c"])]: r() < 0.3 ? null : `section ${i}` }, r() < 0.5 ? [TOOLS.grep] : undefined, r() < 0.3 ? [{ name: pick(["read", "bash", "grep"]) }] : undefined)));
        } else if (kind === "edit") {
            const targets = branch.filter((e) => e.type === "custom_message" || (e.type === "message" && ["user", "assistant", "toolResult"].includes(e.message.role)));
            if (targets.length === 0) continue;
            const target = pick(targets);
            add(sm.appendContextEdit(target.id, r() < 0.4 ? null : { content: r() < 0.5 ? `edited ${i}` : [text(`edited block ${i}`)] }));
        } else if (kind === "usage") add(sm.appendUsage(pick(["cache_warm", "other"]), "anthropic", "claude-haiku-4-5", usage(0, 0, 100 + i, 0, 0.0001)).id);
        else if (kind === "compaction") {
            const before = branch.filter(() => r() < 0.3);
            const firstKept = r() < 0.2 ? null : before.length ? pick(before).id : branch.length ? pick(branch).id : null;
            add(sm.appendCompaction(`summary ${i}`, firstKept, 1000 + i, undefined, false, r() < 0.5 ? usage(50, 5, 0, 0, 0.0002) : undefined));
        } else if (kind === "branch") sm.branch(pick(all));
        else if (kind === "summary") add(sm.branchWithSummary(pick(all), r() < 0.2 ? "" : `branch summary ${i}`, undefined, false, r() < 0.5 ? usage(20, 2, 0, 0, 0.0001) : undefined));
        else if (kind === "label") add(sm.appendLabelChange(pick(all), r() < 0.3 ? "" : `L${i}`));
        else if (kind === "name") add(sm.appendSessionInfo(r() < 0.3 ? "" : `name ${i}`));
        else if (kind === "model") add(sm.appendModelChange("openai", `gpt-${i}`));
        else if (kind === "thinking") add(sm.appendThinkingLevelChange(pick(["off", "low", "high", "max"])));
        else if (kind === "custom") add(r() < 0.5 ? sm.appendCustomEntry("state", { i }) : sm.appendCustomMessageEntry("note", `note ${i}`, r() < 0.5));
        else if (kind === "bash") add(sm.appendMessage(bash(`ls ${i}`, "out ".repeat(i % 9), { excludeFromContext: r() < 0.3 })));
        else if (kind === "reset") sm.resetLeaf();
    }
    // The file's leaf is its last line: end on a user message so the leaf is a real one.
    add(sm.appendMessage(user("the end")));
    return { last: all[all.length - 1] };
}

try {
    const sm = SessionManager.open(resolve(out), dirname(resolve(out)), "/w/project");
    let ids;
    if (scenario === "kitchen") ids = kitchen(sm);
    else if (scenario === "named") ids = named(sm);
    else if (scenario === "nulls") ids = nulls(sm);
    else if (scenario.startsWith("random:")) {
        const [, seed, n] = scenario.split(":");
        ids = random(sm, Number(seed), Number(n));
    } else fail(`unknown scenario ${scenario}`, 2);
    process.stdout.write(`${JSON.stringify({ file: sm.getSessionFile(), ids })}\n`);
} finally {
    rmSync(agentDir, { recursive: true, force: true });
}
