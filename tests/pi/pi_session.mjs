// Loads a session with Pi's own SessionManager and prints what Pi sees: the leaf, the path, the context.
// usage: node pi_session.mjs NODE_MODULES_DIR FILE SESSION_DIR
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [modules, file, sessionDir] = process.argv.slice(2);
const url = pathToFileURL(join(modules, "@mariozechner/pi-coding-agent/dist/core/session-manager.js")).href;
const { SessionManager } = await import(url);
const sm = SessionManager.open(file, sessionDir);
const ctx = sm.buildSessionContext();
const path = sm.getBranch().map((e) => e.id);
const leaf = sm.getLeafEntry();
console.log(JSON.stringify({
  leafId: sm.getLeafId(),
  leafType: leaf ? leaf.type : null,
  path,
  name: sm.getSessionName() ?? null,
  labels: Object.fromEntries(sm.getEntries().filter((e) => sm.getLabel(e.id)).map((e) => [e.id, sm.getLabel(e.id)])),
  roles: ctx.messages.map((m) => m.role),
  summaries: ctx.messages.filter((m) => m.role === "branchSummary").map((m) => m.summary),
  model: ctx.model,
  thinkingLevel: ctx.thinkingLevel,
}));
