// `cargo xtask bench compare`'s worker for the real implementations: times what a host of pi
// (node) or omp (bun) does with a session file, and prints one JSON object on stdout.
//
//   node bench.mjs pi  context FILE        open + buildSessionContext + convertToLlm
//   bun  bench.mjs omp context FILE
//   node bench.mjs pi  loop FILE TURNS     open, then TURNS × (append user, append assistant,
//   bun  bench.mjs omp loop FILE TURNS       buildSessionContext, convertToLlm); FILE is appended to
//
// Times are milliseconds measured inside the process (module loading excluded); `max_rss_mb` is
// the process's peak resident set (module loading included).
import path from "node:path";
import { performance } from "node:perf_hooks";

const [impl, mode, file, turnsArg] = process.argv.slice(2);
if (!impl || !mode || !file) {
	console.error("usage: bench.mjs pi|omp context|loop FILE [TURNS]");
	process.exit(2);
}

async function load() {
	if (impl === "omp") {
		const { SessionManager } = await import("@oh-my-pi/pi-coding-agent/session/session-manager");
		const { convertToLlm } = await import("@oh-my-pi/pi-coding-agent/session/messages");
		const open = file => SessionManager.open(file, path.dirname(file), undefined, { suppressBreadcrumb: true });
		return { open, convertToLlm };
	}
	const { SessionManager, convertToLlm } = await import("@mariozechner/pi-coding-agent");
	return { open: async file => SessionManager.open(file, path.dirname(file)), convertToLlm };
}

const { open, convertToLlm } = await load();
const maxRssMb = () => process.resourceUsage().maxRSS / 1024;

function userMessage(turn) {
	return { role: "user", content: [{ type: "text", text: `turn ${turn}: please run the tests again` }], timestamp: Date.now() };
}

function assistantMessage(turn) {
	return {
		role: "assistant",
		content: [{ type: "text", text: `turn ${turn}: the tests pass now.` }],
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-sonnet-4-5",
		usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		stopReason: "stop",
		timestamp: Date.now(),
	};
}

if (mode === "context") {
	const started = performance.now();
	const sm = await open(file);
	const opened = performance.now();
	const context = sm.buildSessionContext();
	const built = performance.now();
	const llm = convertToLlm(context.messages);
	const converted = performance.now();
	const json = JSON.stringify(context);
	const written = performance.now();
	console.log(
		JSON.stringify({
			impl,
			open_ms: opened - started,
			context_ms: built - opened,
			open_context_ms: built - started,
			llm_ms: converted - built,
			stringify_ms: written - converted,
			messages: context.messages.length,
			llm_messages: llm.length,
			context_bytes: json.length,
			max_rss_mb: maxRssMb(),
		}),
	);
} else if (mode === "loop") {
	const turns = Number(turnsArg ?? 100);
	const started = performance.now();
	const sm = await open(file);
	const openMs = performance.now() - started;
	const perTurn = [];
	let messages = 0;
	for (let turn = 0; turn < turns; turn++) {
		const t0 = performance.now();
		sm.appendMessage(userMessage(turn));
		sm.appendMessage(assistantMessage(turn));
		const context = sm.buildSessionContext();
		const llm = convertToLlm(context.messages);
		messages = llm.length;
		perTurn.push(performance.now() - t0);
	}
	console.log(JSON.stringify({ impl, open_ms: openMs, turn_ms: perTurn, messages, max_rss_mb: maxRssMb() }));
} else {
	console.error(`unknown mode ${mode}`);
	process.exit(2);
}
