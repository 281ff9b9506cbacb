// Records omp 18.2.3 keeping sessions in Redis, for `cargo xtask golden` (no Redis, no node at
// test time): omp's own RedisSessionStorage (over Bun's RedisClient) and SessionManager write
// and title sessions in an empty Redis, then this script dumps the keyspace (every key under the
// prefix, its type and bytes) and omp's answers: each session's whole buildSessionContext(),
// leaf, title and entry count as omp resumes it, and omp's session picker per folder.
// Run by `cargo xtask record` (xtask/src/record/redis.rs) under bun:
//
//   bun --no-install redis-record.mjs URL PREFIX OUT_DIR
//
// Writes OUT_DIR/keyspace.json ({prefix, keys: [[key, {string} | {hash}]]}, sorted by key) and
// OUT_DIR/expected.json ({sessions: [{name, path, context, leafId, title, entries}],
// listings: [{dir, sessions: [{path, title, id, messageCount}]}]}).
// omp mints ids, times and mtimes: a re-recording differs in those, and golden compares ours with
// omp's answers from the same recording.
const [url, prefix, outDir] = process.argv.slice(2);
const { RedisClient } = await import("bun");
const { mkdirSync, writeFileSync } = await import("node:fs");
const PACKAGE = "@oh-my-pi/pi-coding-agent";
const { RedisSessionStorage } = await import(`${PACKAGE}/session/redis-session-storage`);
const { SessionManager } = await import(`${PACKAGE}/session/session-manager`);

const client = new RedisClient(url);
const storage = await RedisSessionStorage.create({ client, prefix });

const T0 = 1767225600000;
function user(text, i) {
	return { role: "user", content: [{ type: "text", text }], timestamp: T0 + i };
}
function assistant(text, i, model = "claude-sonnet-4-5", provider = "anthropic") {
	const cost = { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 };
	return {
		role: "assistant",
		content: [{ type: "thinking", thinking: `thinking about ${text}` }, { type: "text", text }],
		api: provider === "anthropic" ? "anthropic-messages" : "openai-responses",
		provider,
		model,
		usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost },
		stopReason: "stop",
		timestamp: T0 + 500 + i,
	};
}

const DIR = "/home/u/.omp/agent/sessions/--work-project--";
const OTHER = "/home/u/.omp/agent/sessions/--work-other--";

// Each scenario: a folder, a cwd, and what omp does, awaiting each publish as its agent loop
// does (omp publishes to Redis asynchronously; two unawaited appends race its own rewrite check).
const scenarios = [
	{
		name: "titled-by-user", dir: DIR, cwd: "/work/project",
		async run(sm) {
			for (let i = 0; i < 3; i++) {
				sm.appendMessage(user(`question ${i}`, i));
				await sm.flush();
				sm.appendMessage(assistant(`answer ${i}`, i));
				await sm.flush();
			}
			await sm.setSessionName("Redis title", "user");
		},
	},
	{
		name: "model-and-thinking", dir: DIR, cwd: "/work/project",
		async run(sm) {
			sm.appendMessage(user("first", 0));
			await sm.flush();
			sm.appendMessage(assistant("first answer", 0));
			await sm.flush();
			sm.appendModelChange("openai/gpt-5");
			await sm.flush();
			sm.appendThinkingLevelChange("high");
			await sm.flush();
			sm.appendMessage(user("second", 1));
			await sm.flush();
			sm.appendMessage(assistant("second answer", 1, "gpt-5", "openai"));
			await sm.flush();
			await sm.flush();
			await sm.setSessionName("Auto title", "auto");
		},
	},
	{
		name: "branched-untitled", dir: OTHER, cwd: "/work/other",
		async run(sm) {
			sm.appendMessage(user("root", 0));
			await sm.flush();
			const first = sm.appendMessage(assistant("root answer", 0));
			await sm.flush();
			sm.appendMessage(user("abandoned", 1));
			await sm.flush();
			sm.appendMessage(assistant("abandoned answer", 1));
			await sm.flush();
			sm.branch(first);
			sm.appendMessage(user("kept", 2));
			await sm.flush();
			sm.appendMessage(assistant("kept answer", 2));
			await sm.flush();
			await sm.flush();
		},
	},
	{
		name: "retitled", dir: OTHER, cwd: "/work/other",
		async run(sm) {
			sm.appendMessage(user("hello", 0));
			await sm.flush();
			sm.appendMessage(assistant("hi", 0));
			await sm.flush();
			await sm.flush();
			await sm.setSessionName("First title", "auto");
			sm.appendMessage(user("more", 1));
			await sm.flush();
			sm.appendMessage(assistant("more answer", 1));
			await sm.flush();
			await sm.flush();
			await sm.setSessionName("Second title", "user");
		},
	},
];

const sessions = [];
for (const scenario of scenarios) {
	const sm = SessionManager.create(scenario.cwd, scenario.dir, storage);
	await scenario.run(sm);
	await sm.flush();
	await storage.drain();
	const path = sm.getSessionFile();
	await sm.close();
	const resumed = await SessionManager.open(path, undefined, storage, { suppressBreadcrumb: true });
	sessions.push({
		name: scenario.name,
		path,
		context: resumed.buildSessionContext(),
		leafId: resumed.getLeafId(),
		title: resumed.getSessionName() ?? null,
		entries: resumed.getEntries().length,
	});
	await resumed.close();
}
await storage.drain();

const listings = [];
for (const dir of [DIR, OTHER]) {
	const listed = await SessionManager.list(dir, dir, storage);
	listings.push({
		dir,
		sessions: listed.map(s => ({ path: s.path, title: s.title ?? null, id: s.id, messageCount: s.messageCount })),
	});
}

const keys = [];
let cursor = "0";
do {
	const [next, batch] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", "500");
	cursor = next;
	keys.push(...batch);
} while (cursor !== "0");
keys.sort();
const dump = [];
for (const key of keys) {
	const type = await client.send("TYPE", [key]);
	if (type === "string") dump.push([key, { string: await client.get(key) }]);
	else if (type === "hash") {
		const fields = (await client.hgetall(key)) ?? {};
		const sorted = Object.fromEntries(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
		dump.push([key, { hash: sorted }]);
	} else throw new Error(`unexpected ${type} key ${key}`);
}

mkdirSync(outDir, { recursive: true });
writeFileSync(`${outDir}/keyspace.json`, `${JSON.stringify({ prefix, keys: dump }, null, 2)}\n`);
writeFileSync(`${outDir}/expected.json`, `${JSON.stringify({ omp: "18.2.3", sessions, listings }, null, 2)}\n`);
console.log(JSON.stringify({ sessions: sessions.length, keys: dump.length }));
client.close();
