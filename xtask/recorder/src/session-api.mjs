// The scenario-facing session API that omp's and pi's SessionManagers spell the same way.
// impl-omp.mjs and impl-pi.mjs extend these classes with the calls where the two agents differ.
import { tick } from "./determinism.mjs";

/** Write calls common to both agents. Every call that appends an entry advances the fake clock. */
export class SessionWriter {
	constructor(sm, impl) {
		this.sm = sm;
		this.impl = impl;
	}
	append(message) {
		tick();
		return this.sm.appendMessage(message);
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
	/** createBranchedSession(leafId): the manager continues in the new file (which finish() returns). */
	fork(leafId) {
		tick();
		return this.sm.createBranchedSession(leafId);
	}
	leaf() {
		return this.sm.getLeafId();
	}
}

/**
 * Read side: what the real agent returns for an opened file. `implementation.buildSessionContext`
 * is the module-level function, used for leaves the manager cannot branch to.
 */
export class SessionReader {
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
			else return this.implementation.buildSessionContext(this.sm.getEntries(), leafId);
			return this.sm.buildSessionContext();
		} finally {
			if (saved === null) this.sm.resetLeaf();
			else this.sm.branch(saved);
		}
	}
}
