// omp 18.2.3's own Redis session storage (RedisSessionStorage over Bun's RedisClient) and
// SessionManager, driven against a live Redis server by the interop tests
// (crates/pi-session-cli/tests/redis.rs). Run under bun:
//
//   bun --no-install redis-omp.mjs URL PREFIX COMMAND ARGS...
//
// Commands (each prints one JSON object on stdout):
//   write DIR CWD N TITLE   a new session in DIR: N user/assistant turns, then the title (user)
//   resume PATH             {context, leafId, title, entries}: what omp resumes
//   append PATH N TAG       N user messages "TAG i", as fast as omp publishes them
//   rewrite PATH            a whole rewrite of the session (omp's writeText), one line longer
//   list DIR                {sessions: [{path, title, id, messageCount}]}: omp's picker
const [url, prefix, command, ...args] = process.argv.slice(2);
const { RedisClient } = await import("bun");
const PACKAGE = "@oh-my-pi/pi-coding-agent";
const { RedisSessionStorage } = await import(`${PACKAGE}/session/redis-session-storage`);
const { SessionManager } = await import(`${PACKAGE}/session/session-manager`);

const client = new RedisClient(url);
const storage = await RedisSessionStorage.create({ client, prefix });

function user(text, i) {
	return { role: "user", content: [{ type: "text", text }], timestamp: 1767225600000 + i };
}

// omp writes a session only once it has an assistant message.
function assistant(text, i) {
	const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
	return {
		role: "assistant",
		content: [{ type: "text", text }],
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-sonnet-4-5",
		usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: zero },
		stopReason: "stop",
		timestamp: 1767225600500 + i,
	};
}

function contextOf(sm) {
	return sm.buildSessionContext().messages;
}

async function open(path) {
	return SessionManager.open(path, undefined, storage, { suppressBreadcrumb: true });
}

let result;
switch (command) {
	case "write": {
		const [dir, cwd, n, title] = args;
		const sm = SessionManager.create(cwd, dir, storage);
		for (let i = 0; i < Number(n); i++) {
			// omp publishes asynchronously to Redis: wait for each publish, as its agent loop does.
			sm.appendMessage(user(`omp message ${i}`, i));
			await sm.flush();
			sm.appendMessage(assistant(`omp answer ${i}`, i));
			await sm.flush();
		}
		if (title) await sm.setSessionName(title, "user");
		await sm.flush();
		await storage.drain();
		result = { path: sm.getSessionFile(), context: contextOf(sm), leafId: sm.getLeafId(), title: sm.getSessionName() };
		await sm.close();
		break;
	}
	case "resume": {
		const sm = await open(args[0]);
		result = { context: contextOf(sm), leafId: sm.getLeafId(), title: sm.getSessionName() ?? null, entries: sm.getEntries().length };
		await sm.close();
		break;
	}
	case "append": {
		const [path, n, tag] = args;
		const sm = await open(path);
		for (let i = 0; i < Number(n); i++) {
			sm.appendMessage(user(`${tag} ${i}`, i));
			await sm.flush();
		}
		await storage.drain();
		result = { appended: Number(n), leafId: sm.getLeafId() };
		await sm.close();
		break;
	}
	case "rewrite": {
		const [path] = args;
		const text = await storage.readText(path);
		await storage.writeText(path, `${text}{"type":"label","id":"feedf00d","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x"}\n`);
		await storage.drain();
		result = { rewritten: true };
		break;
	}
	case "list": {
		const sessions = await SessionManager.list(args[0], args[0], storage);
		result = { sessions: sessions.map(s => ({ path: s.path, title: s.title ?? null, id: s.id, messageCount: s.messageCount })) };
		break;
	}
	default:
		throw new Error(`unknown command ${command}`);
}
console.log(JSON.stringify(result));
client.close();
