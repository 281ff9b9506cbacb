// `cargo xtask bench ls` runs this: pi 0.73.1's SessionManager.list on a folder, timed.
//
//   node bench-list.mjs DIR RUNS    (PI_NODE_MODULES=/path/to/node_modules to load pi elsewhere)
//
// Prints JSON: the time of each run in ms, and what the last run listed (per file: name,
// firstMessage, messageCount), so the benchmark can compare our summaries with pi's.
const [dir, runsText] = process.argv.slice(2);
const runs = Number(runsText ?? "3");
// PI_NODE_MODULES names another node_modules holding the same pinned package.
const modules = process.env.PI_NODE_MODULES
	? new URL(`file://${process.env.PI_NODE_MODULES.replace(/\/?$/, "/")}`)
	: new URL("./node_modules/", import.meta.url);
const base = new URL("@mariozechner/pi-coding-agent/dist/core/", modules);
const { SessionManager } = await import(new URL("session-manager.js", base).href);

const times = [];
let sessions = [];
for (let i = 0; i < runs; i++) {
	const start = performance.now();
	sessions = await SessionManager.list(dir, dir);
	times.push(performance.now() - start);
}
const listed = sessions.map((s) => ({
	path: s.path,
	name: s.name ?? null,
	firstMessage: s.firstMessage,
	messageCount: s.messageCount,
	modified: s.modified.toISOString(),
}));
process.stdout.write(JSON.stringify({ node: process.version, times, sessions: listed }));
