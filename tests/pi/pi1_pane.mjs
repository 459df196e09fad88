// Pi 1.6's own answers for the entry pane's parity test: for each system message, pi-ai's getSystemMessageText
// and the coding agent's estimateTokens; for a session file, buildSessionProjection at its last entry (which
// entries are omitted and what content replaced ones get).
// usage: node pi1_pane.mjs <node_modules> <systems.json> <session.jsonl>
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modules, systemsFile, sessionFile] = process.argv.slice(2);
const load = (rel) => import(pathToFileURL(`${modules}/@earendil-works/${rel}`).href);
const { getSystemMessageText } = await load("pi-ai/dist/utils/text.js");
const { estimateTokens } = await load("pi-coding-agent/dist/core/compaction/compaction.js");
const { buildSessionProjection } = await load("pi-coding-agent/dist/core/session-manager.js");

const systems = JSON.parse(readFileSync(systemsFile, "utf8")).map((m) => ({
	text: getSystemMessageText(m),
	tokens: estimateTokens(m),
}));
const entries = readFileSync(sessionFile, "utf8")
	.split("\n")
	.filter((l) => l.trim())
	.map((l) => JSON.parse(l))
	.filter((e) => e.type !== "session");
const byId = new Map(entries.map((e) => [e.id, e]));
const projection = buildSessionProjection(entries, entries[entries.length - 1].id, byId);
const projected = projection.entries.map((p) => ({
	id: p.sourceEntry.id,
	messages: p.messages.map((m) => ({ role: m.role, content: m.content ?? null })),
}));
process.stdout.write(`${JSON.stringify({ systems, projected })}\n`);
