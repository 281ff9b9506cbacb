// `cargo xtask bench ls` runs this: pi 0.73.1's SessionManager.list on a folder, timed.
//
//   node bench-list.mjs DIR RUNS
//
// Prints JSON: the time of each run in ms, and what the last run listed (per file: name,
// firstMessage, messageCount), so the benchmark can compare our summaries with pi's.
const [dir, runsText] = process.argv.slice(2);
const runs = Number(runsText ?? "3");
const base = new URL("./node_modules/@mariozechner/pi-coding-agent/dist/core/", import.meta.url);
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
