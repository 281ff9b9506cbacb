// omp: @oh-my-pi/pi-coding-agent 18.2.3, run under bun (the package ships TypeScript sources).
import { copyFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { tick } from "./determinism.mjs";
import { SessionReader, SessionWriter } from "./session-api.mjs";

const PACKAGE = "@oh-my-pi/pi-coding-agent";
const VERSION = "18.2.3";

export async function loadOmp() {
	if (!globalThis.Bun) throw new Error("the omp recorder must run under bun (node_modules/.bin/bun)");
	const { SessionManager } = await import(`${PACKAGE}/session/session-manager`);
	const { buildSessionContext } = await import(`${PACKAGE}/session/session-context`);
	const { convertToLlm, wrapSteeringForModel } = await import(`${PACKAGE}/session/messages`);
	const { filterProviderReplayMessages } = await import("@oh-my-pi/pi-agent-core");
	const { getBlobsDir } = await import("@oh-my-pi/pi-utils");
	const functions = { SessionManager, buildSessionContext, convertToLlm, wrapSteeringForModel, filterProviderReplayMessages, getBlobsDir };
	for (const [key, value] of Object.entries(functions)) {
		if (typeof value !== "function") throw new Error(`${PACKAGE} ${VERSION} does not export ${key}`);
	}
	return new OmpImplementation(functions);
}

const BLOB_NAME = /^[a-f0-9]{64}$/;

class OmpImplementation {
	constructor(functions) {
		Object.assign(this, functions);
		this.impl = "omp";
		this.dialect = "omp";
		this.label = `omp@${VERSION}`;
		this.packageName = PACKAGE;
		this.version = VERSION;
	}

	/** omp's blob store (`<agent dir>/blobs`), where it externalizes image data. */
	blobsDir() {
		return this.getBlobsDir();
	}

	/** Copies canonical blob files (`<sha256 hex>`) referenced by `jsonlText` from omp's store into `targetDir`. */
	exportBlobs(jsonlText, targetDir) {
		const refs = new Set(Array.from(jsonlText.matchAll(/blob:sha256:([a-f0-9]{64})/g), m => m[1]));
		if (refs.size === 0) return [];
		mkdirSync(targetDir, { recursive: true });
		for (const hash of refs) {
			const source = path.join(this.blobsDir(), hash);
			if (!existsSync(source)) throw new Error(`omp wrote a reference to blob ${hash} but ${source} does not exist`);
			copyFileSync(source, path.join(targetDir, hash));
		}
		return [...refs].sort();
	}

	/** Makes the blobs in `sourceDir` available to omp (for files written elsewhere). */
	importBlobs(sourceDir) {
		if (!existsSync(sourceDir)) return;
		mkdirSync(this.blobsDir(), { recursive: true });
		for (const name of readdirSync(sourceDir)) {
			if (BLOB_NAME.test(name)) copyFileSync(path.join(sourceDir, name), path.join(this.blobsDir(), name));
		}
	}

	async create(dir, cwd) {
		return new OmpWriter(this.SessionManager.create(cwd, dir));
	}

	async open(file, dir) {
		const sm = await this.SessionManager.open(file, dir, undefined, { suppressBreadcrumb: true });
		return new OmpReader(this, sm);
	}
}

/** Scenario-facing write API over omp's SessionManager. Every call advances the fake clock. */
class OmpWriter extends SessionWriter {
	constructor(sm) {
		super(sm, "omp");
	}
	/** omp stores "provider/modelId" plus a role (default, temporary, fallback, smol, ...). */
	model(provider, modelId, role, resolvedModelIsFallback) {
		tick();
		return this.sm.appendModelChange(`${provider}/${modelId}`, role, resolvedModelIsFallback);
	}
	thinking(level, configured) {
		tick();
		return this.sm.appendThinkingLevelChange(level, configured);
	}
	compaction(summary, firstKeptEntryId, tokensBefore, extra = {}) {
		tick();
		return this.sm.appendCompaction(summary, extra.shortSummary, firstKeptEntryId, tokensBefore, {
			details: extra.details,
			fromExtension: extra.fromHook,
			preserveData: extra.preserveData,
			method: extra.method,
			providerReplayThroughEntryId: extra.providerReplayThroughEntryId,
			tokensAfter: extra.tokensAfter,
		});
	}
	customMessage(customType, content, display, details, attribution) {
		tick();
		return this.sm.appendCustomMessageEntry(customType, content, display, details, attribution);
	}
	/** omp's session title (`title_change` entry plus the 256-byte title slot on line 1). */
	async name(name, source = "user") {
		tick();
		await this.sm.setSessionName(name, source);
		return this.sm.getLeafId();
	}
	resetBoundary() {
		tick();
		return this.sm.appendResetBoundary();
	}
	ttsr(rules) {
		tick();
		return this.sm.appendTtsrInjection(rules);
	}
	mode(mode, data) {
		tick();
		return this.sm.appendModeChange(mode, data);
	}
	serviceTier(tier) {
		tick();
		return this.sm.appendServiceTierChange(tier);
	}
	/** Off-transcript usage recorded on a (possibly non-active) branch without moving the leaf. */
	modelUsage(usage, parentId) {
		tick();
		return this.sm.appendModelUsage(usage, { sessionId: this.sm.getSessionId(), parentId });
	}
	appendToBranch(message, parentId) {
		tick();
		return this.sm.appendMessageToBranch(message, parentId);
	}
	/** The way omp records a recovered retry: set `retryRecovery` in place, then rewrite the file. */
	async retryRecovery(entryId, recovery) {
		tick();
		const entry = this.sm.getEntry(entryId);
		if (!entry || entry.type !== "message" || entry.message.role !== "assistant") throw new Error(`retryRecovery: ${entryId} is not an assistant message`);
		entry.message.retryRecovery = recovery;
		await this.sm.rewriteEntries();
	}
	async finish() {
		await this.sm.ensureOnDisk();
		await this.sm.flush();
		const file = this.sm.getSessionFile();
		await this.sm.close();
		return file;
	}
}

class OmpReader extends SessionReader {
	/**
	 * `llm`: omp's `convertToLlm(messages)` (session/messages.ts).
	 * `llmAgentLoop`: what omp's agent loop sends for a vision model with images allowed and no
	 * secrets configured (sdk.ts): transformContext's `wrapSteeringForModel`, then `convertToLlm`,
	 * then `filterProviderReplayMessages` (omp.md §5.1 steps 2, 3 and 5).
	 */
	llm(messages) {
		const { convertToLlm, wrapSteeringForModel, filterProviderReplayMessages } = this.implementation;
		return {
			llm: convertToLlm(messages),
			llmAgentLoop: filterProviderReplayMessages(convertToLlm(wrapSteeringForModel(messages))),
		};
	}
	async close() {
		await this.sm.close();
	}
}
