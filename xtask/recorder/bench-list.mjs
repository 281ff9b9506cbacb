// `cargo xtask bench ls` and `bench usage` run this: the real agents on the same folder, timed.
//
//   node bench-list.mjs pi list DIR RUNS     pi 0.73.1's SessionManager.list
//   node bench-list.mjs pi usage DIR RUNS    pi 0.73.1 reading every session (parseSessionEntries)
//                                            and summing its assistant turns' usage, as pi's
//                                            footer does for one session
//   bun  bench-list.mjs omp list DIR RUNS    omp 18.2.3's SessionManager.list
//
// (PI_NODE_MODULES=/path/to/node_modules loads the packages from elsewhere.) Prints JSON: the
// time of each run in ms (in-process, so the runtime's start-up is not counted), and what the
// last run found: for `list`, per file its name, firstMessage and messageCount, so the benchmark
// can compare our summaries with theirs; for `usage`, the totals.
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";

const [impl, mode, dir, runsText] = process.argv.slice(2);
if (!["pi", "omp"].includes(impl) || !["list", "usage"].includes(mode) || !dir) {
	console.error("usage: bench-list.mjs pi|omp list|usage DIR RUNS");
	process.exit(2);
}
const runs = Number(runsText ?? "3");
const modules = process.env.PI_NODE_MODULES
	? new URL(`file://${process.env.PI_NODE_MODULES.replace(/\/?$/, "/")}`)
	: new URL("./node_modules/", import.meta.url);

async function sessionManager() {
	if (impl === "omp") {
		return (await import("@oh-my-pi/pi-coding-agent/session/session-manager")).SessionManager;
	}
	const base = new URL("@mariozechner/pi-coding-agent/dist/core/", modules);
	return (await import(new URL("session-manager.js", base).href)).SessionManager;
}

async function list() {
	const SessionManager = await sessionManager();
	const times = [];
	let sessions = [];
	for (let i = 0; i < runs; i++) {
		const start = performance.now();
		sessions = await SessionManager.list(dir, dir);
		times.push(performance.now() - start);
	}
	const listed = sessions.map((s) => ({
		path: s.path,
		name: s.name ?? s.title ?? null,
		firstMessage: s.firstMessage,
		messageCount: s.messageCount,
	}));
	return { times, sessions: listed };
}

async function usage() {
	const base = new URL("@mariozechner/pi-coding-agent/dist/core/", modules);
	const { parseSessionEntries } = await import(new URL("session-manager.js", base).href);
	const times = [];
	let total;
	for (let i = 0; i < runs; i++) {
		const start = performance.now();
		total = { files: 0, calls: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
		for (const name of fs.readdirSync(dir)) {
			if (!name.endsWith(".jsonl")) continue;
			const entries = parseSessionEntries(fs.readFileSync(path.join(dir, name), "utf8"));
			total.files += 1;
			for (const entry of entries) {
				const usage = entry.type === "message" && entry.message?.role === "assistant" && entry.message.usage;
				if (!usage) continue;
				total.calls += 1;
				total.input += usage.input ?? 0;
				total.output += usage.output ?? 0;
				total.cacheRead += usage.cacheRead ?? 0;
				total.cacheWrite += usage.cacheWrite ?? 0;
				total.cost += usage.cost?.total ?? 0;
			}
		}
		times.push(performance.now() - start);
	}
	return { times, total };
}

const result = mode === "list" ? await list() : await usage();
const runtime = typeof Bun === "undefined" ? `node ${process.version}` : `bun ${Bun.version}`;
process.stdout.write(JSON.stringify({ runtime, ...result }));
