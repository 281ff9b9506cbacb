// The pi implementations: @mariozechner/pi-coding-agent 0.73.1 and its renamed successor
// @earendil-works/pi-coding-agent 1.6.0, both run under node.
//
// pi 1.6.0 declares engines node >= 22.19. Its package index imports `globSync` from node:fs
// (node >= 22), so under node 20 we load the two modules we need directly from dist/core/
// (session-manager.js and messages.js), which do not touch that API.
import { tick } from "./determinism.mjs";

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
		this.moduleBuildSessionContext = buildSessionContext;
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
class PiWriter {
	constructor(sm) {
		this.sm = sm;
		this.impl = "pi";
	}
	append(message) {
		tick();
		return this.sm.appendMessage(message);
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
	branch(id) {
		this.sm.branch(id);
	}
	resetLeaf() {
		this.sm.resetLeaf();
	}
	branchWithSummary(fromId, summary, details) {
		tick();
		return this.sm.branchWithSummary(fromId, summary, details);
	}
	label(targetId, label) {
		tick();
		return this.sm.appendLabelChange(targetId, label);
	}
	custom(customType, data) {
		tick();
		return this.sm.appendCustomEntry(customType, data);
	}
	customMessage(customType, content, display, details) {
		tick();
		return this.sm.appendCustomMessageEntry(customType, content, display, details);
	}
	async name(name) {
		tick();
		return this.sm.appendSessionInfo(name);
	}
	/** createBranchedSession(leafId): the manager continues in the new file (which finish() returns). */
	fork(leafId) {
		tick();
		return this.sm.createBranchedSession(leafId);
	}
	leaf() {
		return this.sm.getLeafId();
	}
	async finish() {
		return this.sm.getSessionFile();
	}
}

/** Read side: what the real pi returns for an opened file. */
class PiReader {
	constructor(implementation, sm) {
		this.implementation = implementation;
		this.sm = sm;
	}
	header() {
		return this.sm.getHeader();
	}
	sessionName() {
		return this.sm.getSessionName();
	}
	leafId() {
		return this.sm.getLeafId();
	}
	entries() {
		return this.sm.getEntries();
	}
	branchIds(leafId) {
		return this.sm.getBranch(leafId ?? undefined).map(entry => entry.id);
	}
	childCount(id) {
		return this.sm.getChildren(id).length;
	}
	label(id) {
		return this.sm.getLabel(id);
	}
	hasEntry(id) {
		return this.sm.getEntry(id) !== undefined;
	}
	/** buildSessionContext for the manager's own leaf. */
	defaultContext() {
		return this.sm.buildSessionContext();
	}
	/** buildSessionContext for another leaf: known ids via branch(), null via resetLeaf(), others via the module function. */
	contextAt(leafId) {
		const saved = this.sm.getLeafId();
		try {
			if (leafId === null) this.sm.resetLeaf();
			else if (this.hasEntry(leafId)) this.sm.branch(leafId);
			else return this.implementation.moduleBuildSessionContext(this.sm.getEntries(), leafId);
			return this.sm.buildSessionContext();
		} finally {
			if (saved === null) this.sm.resetLeaf();
			else this.sm.branch(saved);
		}
	}
	/** pi's agent loop hands `convertToLlm(messages)` to the provider (transformContext is extensions only). */
	llm(messages) {
		return { llm: this.implementation.convertToLlm(messages) };
	}
	async close() {}
}
