// Opens a session file with the real SessionManager and records what it returns.
// The schema is documented in fixtures/README.md; keep the two in step.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export const SCHEMA_VERSION = 1;

/** JSON the way the golden checker reads it: 2-space indent, trailing newline. */
export function stableJson(value) {
	return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * Records `<expected>` for `fixtureFile`. The file is copied to a scratch folder first, because
 * opening can rewrite it (pi migrates v1/v2 files and replaces header-less files on open).
 * `extraLeaves`: leaf ids (or null) to build contexts for besides the default leaf and the tips.
 */
export async function recordExpected(implementation, fixtureFile, meta) {
	const scratch = mkdtempSync(path.join(os.tmpdir(), "pi-session-recorder-open-"));
	try {
		const copy = path.join(scratch, path.basename(fixtureFile));
		copyFileSync(fixtureFile, copy);
		const before = readFileSync(copy);
		let reader;
		try {
			reader = await implementation.open(copy, scratch);
		} catch (error) {
			// The real implementation cannot open this file: that is the recorded result.
			return { expected: { ...identity(implementation, meta), openError: String(error?.message ?? error) } };
		}
		let expected;
		try {
			expected = describe(implementation, reader, meta);
		} finally {
			await reader.close();
		}
		const after = readFileSync(copy);
		const rewrittenOnOpen = !before.equals(after);
		expected.rewrittenOnOpen = rewrittenOnOpen;
		return { expected, rewrittenText: rewrittenOnOpen ? after.toString("utf8") : undefined };
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}

function uniqueIds(entries) {
	const seen = new Set();
	const ids = [];
	for (const entry of entries) {
		if (typeof entry?.id !== "string" || seen.has(entry.id)) continue;
		seen.add(entry.id);
		ids.push(entry.id);
	}
	return ids;
}

function describe(implementation, reader, meta) {
	const entries = reader.entries();
	const ids = uniqueIds(entries);
	const leafId = reader.leafId() ?? null;
	const tips = ids.filter(id => reader.childCount(id) === 0);
	const labels = {};
	for (const id of ids) {
		const label = reader.label(id);
		if (label !== undefined) labels[id] = label;
	}

	const contexts = [contextRecord(reader, "default", leafId, reader.defaultContext())];
	const covered = new Set([leafId]);
	for (const tip of tips) {
		if (covered.has(tip)) continue;
		covered.add(tip);
		contexts.push(contextRecord(reader, "tip", tip, reader.contextAt(tip)));
	}
	for (const extra of meta.extraLeaves ?? []) {
		if (covered.has(extra)) continue;
		covered.add(extra);
		contexts.push(contextRecord(reader, "extra", extra, reader.contextAt(extra)));
	}

	return Object.assign(identity(implementation, meta), {
		header: reader.header(),
		sessionName: reader.sessionName() ?? null,
		entryCount: entries.length,
		leafId,
		branchIds: reader.branchIds(leafId),
		tips,
		labels,
		contexts,
	});
}

function identity(implementation, meta) {
	const record = {
		schema: SCHEMA_VERSION,
		implementation: implementation.label,
		package: `${implementation.packageName}@${implementation.version}`,
		dialect: implementation.dialect,
		scenario: meta.scenario,
		description: meta.description,
		file: meta.file,
	};
	if (meta.blobsDir !== undefined) record.blobsDir = meta.blobsDir;
	if (meta.blobs !== undefined) record.blobs = meta.blobs;
	return record;
}

function contextRecord(reader, kind, leafId, agent) {
	return {
		kind,
		leafId,
		branchIds: leafId === null || !reader.hasEntry(leafId) ? [] : reader.branchIds(leafId),
		agent,
		...reader.llm(agent.messages),
	};
}
