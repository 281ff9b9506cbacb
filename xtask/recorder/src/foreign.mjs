// Records what omp 18.2.3 writes when it imports a Claude Code or Codex session
// (`persistForeignSession`, src/session/foreign-session-import.ts), for `cargo xtask golden`.
//
//   record.mjs omp foreign <corpusDir> <handDir> <outDir>
//
// For every <dir>/claude/*.jsonl and <dir>/codex/*.jsonl of the corpus (real files, read in place,
// may be absent) and of the hand-written fixtures: lay the file out where omp's store looks (a
// fixed folder, so recorded paths are the same on every run), pin its mtime, list it with omp's
// own store, import it with `persistForeignSession` under the fixed clock and seeded ids of
// determinism.mjs, then record:
//   - hand-written fixtures: omp's file as <outDir>/<name>.jsonl (+ blobs/) and the usual
//     <name>.expected.json (recordExpected: header, name, tree, every context in full);
//   - corpus files: only <name>.expected.json, with a SHA-256 per written line and per context
//     (agent, llm, llmAgentLoop of canonical JSON) instead of the content, so no transcript is
//     copied into the repository.
// Every expected.json also has `foreign`: the listing omp made (`info`), the pinned mtime, and the
// values omp minted (session id, clock, fresh entry ids) that golden feeds to our importer.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { reset } from "./determinism.mjs";
import { recordExpected, stableJson } from "./expected.mjs";

const PACKAGE = "@oh-my-pi/pi-coding-agent";
/** Where the foreign stores live while recording (fixed: recorded `sourcePath`s name it). */
export const FOREIGN_ROOT = "/tmp/pi-session-foreign";
/** Every transcript's mtime: 2026-01-01T00:00:00Z (Claude records without a timestamp get it). */
export const MTIME_SECONDS = 1_767_225_600;
/** The project folder Claude transcripts are put in (its name decodes to `/home/user/project`). */
const CLAUDE_PROJECT = "-home-user-project";
const BLOBS_DIR = "blobs";

function sha256(text) {
	return createHash("sha256").update(text).digest("hex");
}

/** JSON with object keys sorted (code-point order), so both sides hash the same text. */
function canonical(value) {
	if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
	if (value !== null && typeof value === "object") {
		const keys = Object.keys(value)
			.filter(key => value[key] !== undefined)
			.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
		return `{${keys.map(key => `${JSON.stringify(key)}:${canonical(value[key])}`).join(",")}}`;
	}
	return JSON.stringify(value) ?? "null";
}

function jsonlFiles(dir) {
	if (!existsSync(dir)) return [];
	return readdirSync(dir)
		.filter(name => name.endsWith(".jsonl"))
		.sort()
		.map(name => path.join(dir, name));
}

/** Puts `file` where the store looks and returns the store and the laid-out path. */
function layOut(modules, source, file) {
	const root = path.join(FOREIGN_ROOT, source);
	rmSync(root, { recursive: true, force: true });
	const folder = source === "claude" ? path.join(root, "projects", CLAUDE_PROJECT) : path.join(root, "sessions", "2026", "01", "01");
	mkdirSync(folder, { recursive: true });
	const target = path.join(folder, path.basename(file));
	copyFileSync(file, target);
	utimesSync(target, MTIME_SECONDS, MTIME_SECONDS);
	const store = source === "claude" ? new modules.ClaudeSessionStore(root) : new modules.CodexSessionStore(root);
	return { store, target, root };
}

function infoJson(info) {
	return {
		source: info.source,
		id: info.id,
		path: info.path,
		cwd: info.cwd,
		title: info.title ?? null,
		// Claude's creation time without a history.jsonl entry is the file's birth time, which
		// cannot be pinned (and which the import does not use): left out to keep recording exact.
		createdMs: info.source === "claude" ? null : info.created.getTime(),
		modifiedMs: info.modified.getTime(),
		firstMessage: info.firstMessage ?? null,
		messageCount: info.messageCount ?? null,
	};
}

/** What omp minted: the header's id and time, and the ids of the entries it appended itself. */
function pinned(text) {
	const lines = text.split("\n").filter(line => line.length > 0).map(line => JSON.parse(line));
	const header = lines.find(line => line.type === "session");
	const minted = lines.filter(line => line.type === "title_change" || (line.type === "custom" && line.customType === "foreign_session_import"));
	return { sessionId: header.id, now: header.timestamp, entryIds: minted.map(line => line.id) };
}

function hashContexts(expected) {
	for (const context of expected.contexts ?? []) {
		for (const key of ["agent", "llm", "llmAgentLoop"]) {
			if (context[key] === undefined) continue;
			context[`${key}Sha256`] = sha256(canonical(context[key]));
			delete context[key];
		}
	}
}

async function recordOne(implementation, modules, { source, file, kind }, outDir) {
	const stem = path.basename(file, ".jsonl");
	const name = kind === "corpus" ? `corpus-${source}-${stem}` : `${source}-${stem}`;
	reset(name);
	const { store, target } = layOut(modules, source, file);
	const listed = await store.list();
	const info = listed.find(candidate => candidate.path === target);
	const foreign = { source, kind, input: path.basename(file), mtimeMs: MTIME_SECONDS * 1000, listed: info !== undefined };
	if (!info) {
		writeFileSync(path.join(outDir, `${name}.expected.json`), stableJson({ scenario: name, foreign }));
		return name;
	}
	foreign.info = infoJson(info);
	const sessionDir = path.join(FOREIGN_ROOT, "out", name);
	rmSync(sessionDir, { recursive: true, force: true });
	// Transcripts named `*fallback*` are imported with a fallback cwd (omp's `moveTo` when the
	// recorded cwd is not a folder on this machine).
	const fallbackCwd = stem.includes("fallback") ? path.join(FOREIGN_ROOT, "fallback-cwd") : undefined;
	if (fallbackCwd) {
		mkdirSync(fallbackCwd, { recursive: true });
		foreign.fallbackCwd = fallbackCwd;
	}
	const manager = await modules.persistForeignSession(store, info, { sessionDir, suppressBreadcrumb: true, fallbackCwd });
	const written = manager.getSessionFile();
	await manager.close();
	const text = readFileSync(written, "utf8");
	foreign.fileName = path.basename(written);
	foreign.pinned = pinned(text);
	const sessionFile = `${name}.jsonl`;
	const meta = {
		scenario: name,
		description: `omp imports the ${source} ${kind === "corpus" ? "corpus" : "hand-written"} transcript ${path.basename(file)}`,
		file: sessionFile,
	};
	let expected;
	if (kind === "corpus") {
		const scratch = path.join(FOREIGN_ROOT, "scratch");
		rmSync(scratch, { recursive: true, force: true });
		mkdirSync(scratch, { recursive: true });
		writeFileSync(path.join(scratch, sessionFile), text);
		({ expected } = await recordExpected(implementation, path.join(scratch, sessionFile), meta));
		hashContexts(expected);
		foreign.lineSha256 = text
			.split("\n")
			.filter(line => line.length > 0)
			.map(sha256);
		rmSync(scratch, { recursive: true, force: true });
	} else {
		writeFileSync(path.join(outDir, sessionFile), text);
		meta.blobs = implementation.exportBlobs(text, path.join(outDir, BLOBS_DIR));
		({ expected } = await recordExpected(implementation, path.join(outDir, sessionFile), meta));
	}
	expected.blobsDir = BLOBS_DIR;
	expected.foreign = foreign;
	writeFileSync(path.join(outDir, `${name}.expected.json`), stableJson(expected));
	return name;
}

/** Records every corpus and hand-written transcript into `outDir`. */
export async function recordForeign(implementation, corpusDir, handDir, outDir) {
	const modules = {
		ClaudeSessionStore: (await import(`${PACKAGE}/session/claude-session-store`)).ClaudeSessionStore,
		CodexSessionStore: (await import(`${PACKAGE}/session/codex-session-store`)).CodexSessionStore,
		persistForeignSession: (await import(`${PACKAGE}/session/foreign-session-import`)).persistForeignSession,
	};
	mkdirSync(outDir, { recursive: true });
	const inputs = [];
	for (const source of ["claude", "codex"]) {
		if (corpusDir !== "-") for (const file of jsonlFiles(path.join(corpusDir, source))) inputs.push({ source, file, kind: "corpus" });
		for (const file of jsonlFiles(path.join(handDir, source))) inputs.push({ source, file, kind: "hand" });
	}
	for (const input of inputs) {
		const name = await recordOne(implementation, modules, input, outDir);
		console.error(`recorder: ${implementation.label} foreign ${name}`);
	}
	rmSync(FOREIGN_ROOT, { recursive: true, force: true });
	console.error(`recorder: ${implementation.label}: ${inputs.length} foreign imports recorded into ${outDir}`);
}
