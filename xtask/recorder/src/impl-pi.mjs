// The pi implementations: @mariozechner/pi-coding-agent 0.73.1 and its renamed successor
// @earendil-works/pi-coding-agent 1.6.0, both run under node.
//
// pi 1.6.0 declares engines node >= 22.19. Its package index imports `globSync` from node:fs
// (node >= 22), so under node 20 we load the two modules we need directly from dist/core/
// (session-manager.js and messages.js), which do not touch that API.
import { tick } from "./determinism.mjs";
import { SessionReader, SessionWriter } from "./session-api.mjs";

const PACKAGES = {
	pi: { name: "@mariozechner/pi-coding-agent", version: "0.73.1", deepImport: false },
	pi16: { name: "@earendil-works/pi-coding-agent", version: "1.6.0", deepImport: true },
};

export async function loadPi(implName) {
	const pkg = PACKAGES[implName];
	if (!pkg) throw new Error(`unknown pi implementation ${implName}`);
	let mod;
	if (pkg.deepImport) {
		const base = new URL(`../node_modules/${pkg.name}/dist/core/`, import.meta.url);
		mod = { ...(await import(new URL("session-manager.js", base).href)), ...(await import(new URL("messages.js", base).href)) };
	} else {
		mod = await import(pkg.name);
	}
	const { SessionManager, buildSessionContext, convertToLlm } = mod;
	for (const [key, value] of Object.entries({ SessionManager, buildSessionContext, convertToLlm })) {
		if (typeof value !== "function") throw new Error(`${pkg.name} does not export ${key}`);
	}
	return new PiImplementation(implName, pkg, SessionManager, buildSessionContext, convertToLlm);
}

class PiImplementation {
	constructor(implName, pkg, SessionManager, buildSessionContext, convertToLlm) {
		this.impl = implName;
		this.dialect = "pi";
		this.label = `pi@${pkg.version}`;
		this.packageName = pkg.name;
		this.version = pkg.version;
		this.SessionManager = SessionManager;
		this.buildSessionContext = buildSessionContext;
		this.convertToLlm = convertToLlm;
	}

	/** A new session writing into `dir` (file named by pi: `<timestamp>_<id>.jsonl`). */
	async create(dir, cwd) {
		return new PiWriter(this.SessionManager.create(cwd, dir));
	}

	/** Opens a file with the real SessionManager (may rewrite it: migration, recovery). */
	async open(file, dir) {
		return new PiReader(this, this.SessionManager.open(file, dir));
	}
}

/** Scenario-facing write API over pi's SessionManager. Every call advances the fake clock. */
class PiWriter extends SessionWriter {
	constructor(sm) {
		super(sm, "pi");
	}
	model(provider, modelId) {
		tick();
		return this.sm.appendModelChange(provider, modelId);
	}
	thinking(level) {
		tick();
		return this.sm.appendThinkingLevelChange(level);
	}
	compaction(summary, firstKeptEntryId, tokensBefore, extra = {}) {
		tick();
		return this.sm.appendCompaction(summary, firstKeptEntryId, tokensBefore, extra.details, extra.fromHook);
	}
	customMessage(customType, content, display, details) {
		tick();
		return this.sm.appendCustomMessageEntry(customType, content, display, details);
	}
	async name(name) {
		tick();
		return this.sm.appendSessionInfo(name);
	}
	async finish() {
		return this.sm.getSessionFile();
	}
}

/** Read side: what the real pi returns for an opened file. */
class PiReader extends SessionReader {
	/** pi's agent loop hands `convertToLlm(messages)` to the provider (transformContext is extensions only). */
	llm(messages) {
		return { llm: this.implementation.convertToLlm(messages) };
	}
	async close() {}
}
