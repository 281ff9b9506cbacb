// Scenario sessions written through each implementation's own SessionManager write API.
//
// A scenario is { name, description, only?: [impl...], run(s, x) } where `s` is the writer (see
// impl-*.mjs; every call advances the fake clock by one second) and `x` = { impl, omp, B }.
// `run` may return { extraLeaves: [...] } to record contexts for more leaves (null = before the
// first entry; an unknown id = the implementation's fallback). Hand-written files use
// { name, description, only?, text(x) } instead and are recorded as they are.
//
// Seeds depend on the scenario name only, so pi 0.73.1 and pi 1.6.0 write identical ids and any
// difference between their fixtures is a real behaviour difference.
import * as B from "./builders.mjs";

const { user, assistant, toolResult, text, thinking, toolCall, image } = B;

/** Standard opening every generated session has: the model and thinking entries pi's sdk writes first. */
function opening(s, x, { provider = "anthropic", model = "claude-sonnet-4-5", level = "medium" } = {}) {
	if (x.omp) s.model(provider, model, "default");
	else s.model(provider, model);
	s.thinking(level);
}

function exchange(s, question, answer, opts) {
	const u = s.append(user([text(question)]));
	const a = s.append(assistant([text(answer)], opts));
	return { u, a };
}

export const SCENARIOS = [
	{
		name: "linear-chat",
		description: "model + thinking entries, three plain user/assistant exchanges; extra leaves: null, a mid-branch id, an unknown id",
		run(s, x) {
			opening(s, x);
			const first = exchange(s, "What is a session file?", "A JSONL journal of the conversation.");
			exchange(s, "Why JSONL?", "Appending one line per entry is cheap and crash-safe.");
			s.append(user("plain string content is allowed too"));
			s.append(assistant([text("Yes, user content may be a string.")]));
			return { extraLeaves: [null, first.a, "zzzzzzzz"] };
		},
	},
	{
		name: "tool-calls",
		description: "an assistant turn with two tool calls and their results (one an error with details), then a final answer",
		run(s, x) {
			opening(s, x);
			s.append(user([text("List the files and read README.md")]));
			s.append(
				assistant([
					text("Let me look."),
					toolCall("toolu_01", "bash", { command: "ls -la", timeout: 30 }),
					toolCall("toolu_02", "read", { path: "README.md", "2": "integer-like key", b: 1 }),
				]),
			);
			s.append(toolResult("toolu_01", "bash", "total 8\n-rw-r--r-- 1 u u 42 README.md\n", { details: { exitCode: 0 } }));
			s.append(toolResult("toolu_02", "read", "ENOENT: no such file", { isError: true, details: {} }));
			s.append(assistant([text("There is a README.md but it could not be read.")]));
		},
	},
	{
		name: "tool-call-without-result",
		description: "a tool call whose result never arrived, followed by a user message; and a dangling call on the last turn",
		run(s, x) {
			opening(s, x);
			s.append(user([text("run the tests")]));
			const dangling = s.append(assistant([text("Running."), toolCall("toolu_a1", "bash", { command: "cargo test" })]));
			s.append(user([text("never mind, stop")]));
			s.append(assistant([text("Stopped.")]));
			s.append(user([text("now check git status")]));
			s.append(assistant([toolCall("toolu_a2", "bash", { command: "git status" }), toolCall("toolu_a3", "bash", { command: "git diff" })]));
			return { extraLeaves: [dangling] };
		},
	},
	{
		name: "orphan-tool-result",
		description: "a tool result whose call is not on the branch (orphan), between normal turns",
		run(s, x) {
			opening(s, x);
			exchange(s, "hello", "hi");
			s.append(toolResult("toolu_ghost", "bash", "output of a call nobody made"));
			exchange(s, "what was that?", "An orphaned tool result.");
		},
	},
	{
		name: "aborted-and-errored-turns",
		description: "aborted turn with empty content, errored turn with an empty text block, errored turn with partial text, then a good turn",
		run(s, x) {
			opening(s, x);
			s.append(user([text("first try")]));
			s.append(assistant([], { stopReason: "aborted", errorMessage: "Request was aborted", usage: B.ZERO_USAGE }));
			s.append(user([text("second try")]));
			s.append(assistant([text("")], { stopReason: "error", errorMessage: "529 overloaded_error: Overloaded", usage: B.ZERO_USAGE }));
			s.append(user([text("third try")]));
			s.append(assistant([text("Partial answ")], { stopReason: "error", errorMessage: "terminated" }));
			s.append(user([text("fourth try")]));
			s.append(assistant([text("Here is the full answer.")]));
		},
	},
	{
		name: "errored-turn-with-tool-calls",
		description: "an errored turn that emitted a tool call plus its synthetic error result, then a retry that succeeds",
		run(s, x) {
			opening(s, x);
			s.append(user([text("edit the file")]));
			s.append(assistant([text("Editing"), toolCall("toolu_e1", "edit", { path: "a.rs", old: "x", new: "y" })], { stopReason: "error", errorMessage: "stream ended unexpectedly" }));
			s.append(toolResult("toolu_e1", "edit", "Tool was not executed because the run was aborted.", { isError: true, details: {} }));
			s.append(user([text("try again")]));
			s.append(assistant([toolCall("toolu_e2", "edit", { path: "a.rs", old: "x", new: "y" })]));
			s.append(toolResult("toolu_e2", "edit", "Applied 1 edit."));
			s.append(assistant([text("Done.")]));
		},
	},
	{
		name: "user-interrupted-thinking",
		description: "an aborted turn interrupted by the user with trailing unsigned thinking (omp strips it), then a new request",
		run(s, x) {
			opening(s, x, { level: "high" });
			s.append(user([text("think hard about primes")]));
			s.append(
				assistant([thinking("Signed reasoning.", "sig-AAA"), text("Partial"), thinking("unsigned trailing thought"), text("  ")], {
					stopReason: "aborted",
					errorMessage: "Interrupted by user",
				}),
			);
			s.append(user([text("ok, short answer please")]));
			s.append(assistant([text("2, 3, 5, 7.")]));
		},
	},
	{
		name: "thinking-signatures",
		description: "thinking with and without signatures, redacted thinking (pi: redacted flag; omp: redactedThinking block), textSignature, thoughtSignature",
		run(s, x) {
			opening(s, x, { level: "high" });
			s.append(user([text("explain borrowing")]));
			const redacted = x.omp ? { type: "redactedThinking", data: "EncryptedRedactedBlob==" } : { type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: "EncryptedRedactedBlob==", redacted: true };
			s.append(
				assistant([
					thinking("The user wants ownership basics.", "EqoBCkYIBxgCKkD1c2lnbmF0dXJl"),
					redacted,
					thinking("An unsigned thought."),
					text("References borrow without taking ownership.", { textSignature: '{"v":1,"id":"msg_01","phase":"final_answer"}' }),
				]),
			);
			s.append(user([text("and with a tool?")]));
			s.append(assistant([thinking("", "encrypted-only-signature"), toolCall("call_9|fc_9", "read", { path: "src/lib.rs" }, { thoughtSignature: "gemini-thought-sig" })], { provider: "google", model: "gemini-2.5-pro", api: "google-generative-ai" }));
			s.append(toolResult("call_9|fc_9", "read", "pub fn f() {}"));
			s.append(assistant([text("See `f`.")], { provider: "google", model: "gemini-2.5-pro", api: "google-generative-ai" }));
		},
	},
	{
		name: "images",
		description: "user images (small inline and large; omp externalizes the large one to blobs), an image in a tool result and in a custom message",
		run(s, x) {
			opening(s, x);
			s.append(user([text("what is in these pictures?"), image(B.SMALL_PNG), image(B.LARGE_PNG)]));
			s.append(assistant([text("A tiny gradient and a larger pattern."), toolCall("toolu_img", "screenshot", {})]));
			s.append(toolResult("toolu_img", "screenshot", [text("Captured."), image(B.LARGE_PNG_2)]));
			s.customMessage("image-note", [text("Attached for reference"), image(B.LARGE_PNG)], true, { source: "test" });
			s.append(assistant([text("The screenshot shows a pattern too.")]));
		},
	},
	{
		name: "compaction-single",
		description: "one compaction keeping the last exchange before it, then more turns",
		run(s, x) {
			opening(s, x);
			exchange(s, "one", "1");
			const kept = exchange(s, "two", "2");
			s.compaction("## Goal\nCount to three.\n\n## Progress\nSaid one.", kept.u, 12345, { details: { readFiles: ["a.txt"], modifiedFiles: [] } });
			exchange(s, "three", "3");
		},
	},
	{
		name: "compactions-several",
		description: "two compactions; the second keeps entries after the first, so the first summary disappears",
		run(s, x) {
			opening(s, x);
			const e1 = exchange(s, "one", "1");
			exchange(s, "two", "2");
			const c1 = s.compaction("First summary", e1.u, 1000);
			const e3 = exchange(s, "three", "3");
			exchange(s, "four", "4");
			s.compaction("Second summary", e3.u, 2000);
			exchange(s, "five", "5");
			return { extraLeaves: [c1] };
		},
	},
	{
		name: "compaction-kept-off-branch",
		description: "a compaction whose firstKeptEntryId is on another branch: nothing before the compaction is kept",
		run(s, x) {
			opening(s, x);
			const root = exchange(s, "root question", "root answer");
			const side = exchange(s, "side question", "side answer");
			s.branch(root.a);
			exchange(s, "main question", "main answer");
			s.compaction("Summary of main", side.u, 500);
			exchange(s, "after", "after answer");
		},
	},
	{
		name: "compaction-kept-missing",
		description: "compactions whose firstKeptEntryId does not exist, and (at a side tip) one keeping an entry after it",
		run(s, x) {
			opening(s, x);
			exchange(s, "q1", "a1");
			const c = s.compaction("Summary with a missing kept id", "deadbeef", 700);
			const later = exchange(s, "q2", "a2");
			s.branch(c);
			s.compaction("Summary keeping a later entry", later.u, 800);
			exchange(s, "q3", "a3");
		},
	},
	{
		name: "branch-summaries",
		description: "branchWithSummary from a mid entry, an empty-summary marker, and a summary from before the first entry (root)",
		run(s, x) {
			opening(s, x);
			const a = exchange(s, "start", "started");
			exchange(s, "explore option A", "A looks bad");
			s.branchWithSummary(a.a, "Tried option A; it failed because of X.", { readFiles: ["x.rs"], modifiedFiles: [] });
			exchange(s, "explore option B", "B works");
			const tipB = s.leaf();
			s.branchWithSummary(tipB, "");
			exchange(s, "continue after marker", "continuing");
			s.branchWithSummary(null, "Abandoned everything; starting over.");
			exchange(s, "fresh start", "ok");
		},
	},
	{
		name: "branches-leaf-not-last",
		description: "three branches; the writer's leaf ends on an older branch (branch() is not persisted), so on reload the leaf is the last line",
		run(s, x) {
			opening(s, x);
			const base = exchange(s, "base", "base answer");
			exchange(s, "branch one", "one");
			const tip1 = s.leaf();
			s.branch(base.a);
			exchange(s, "branch two", "two");
			s.branch(base.u);
			s.append(assistant([text("alternative answer to base")]));
			exchange(s, "branch three", "three");
			s.branch(tip1);
			return { extraLeaves: [base.u] };
		},
	},
	{
		name: "reset-leaf-second-root",
		description: "resetLeaf() then appends: the file has two roots",
		run(s, x) {
			opening(s, x);
			exchange(s, "first root", "one");
			s.resetLeaf();
			exchange(s, "second root", "two");
		},
	},
	{
		name: "labels",
		description: "labels set, overwritten, cleared and set again; a label on an entry of another branch",
		run(s, x) {
			opening(s, x);
			const a = exchange(s, "q1", "a1");
			const b = exchange(s, "q2", "a2");
			s.label(a.u, "start");
			s.label(b.a, "checkpoint");
			s.label(b.a, "checkpoint-2");
			s.label(a.u, undefined);
			s.label(a.a, "");
			s.label(a.a, "answer one ✓");
			s.branch(a.a);
			const side = exchange(s, "side", "side answer");
			s.label(side.u, "side-branch");
			s.branch(b.a);
			s.label(b.u, "back on main");
		},
	},
	{
		name: "custom-entries-and-messages",
		description: "custom entries (ignored by context) and custom messages with display true/false, string and array content, details",
		run(s, x) {
			opening(s, x);
			s.custom("my-extension-state", { counter: 1, nested: { ok: true } });
			s.custom("no-data");
			s.append(user([text("hi")]));
			s.customMessage("reminder", "Remember to run the tests.", true);
			s.customMessage("hidden-context", [text("Hidden context block one."), text("Block two.")], false, { why: "injected by extension" });
			s.append(assistant([text("Noted.")]));
			s.custom("my-extension-state", { counter: 2 });
			s.customMessage("", "empty custom type", false);
			s.append(user([text("bye")]));
			s.append(assistant([text("bye")]));
		},
	},
	{
		name: "model-and-thinking-changes",
		description: x => (x.omp ? "model changes with roles default/temporary/fallback/smol, thinking levels with configured auto" : "several model and thinking level changes between turns"),
		run(s, x) {
			opening(s, x, { level: "low" });
			exchange(s, "q1", "a1");
			if (x.omp) {
				s.model("openai", "gpt-5", "temporary");
				s.thinking("high", "auto");
				exchange(s, "q2", "a2", { provider: "openai", model: "gpt-5", api: "openai-responses" });
				s.model("anthropic", "claude-opus-4", "fallback", true);
				exchange(s, "q3", "a3", { provider: "anthropic", model: "claude-opus-4" });
				s.model("anthropic", "claude-haiku-4-5", "smol");
				s.model("openrouter", "meta/llama-4/maverick", "default");
				s.thinking(undefined);
				exchange(s, "q4", "a4", { provider: "openrouter", model: "meta/llama-4/maverick", api: "openai-completions" });
			} else {
				s.model("openai", "gpt-5");
				s.thinking("high");
				exchange(s, "q2", "a2", { provider: "openai", model: "gpt-5", api: "openai-responses" });
				exchange(s, "q3", "a3 from another model", { provider: "google", model: "gemini-2.5-pro", api: "google-generative-ai" });
				s.model("openrouter", "meta/llama-4/maverick");
				s.thinking("off");
				exchange(s, "q4", "a4", { provider: "openrouter", model: "meta/llama-4/maverick", api: "openai-completions" });
			}
		},
	},
	{
		name: "unicode",
		description: "emoji, CJK, RTL, combining marks, lone surrogates, U+2028/2029, control characters, in text, tool arguments and labels",
		run(s, x) {
			opening(s, x);
			const u = s.append(user([text("Emoji 👩‍💻🚀🇯🇵, CJK 漢字かなカナ한국어, RTL שלום עולם مرحبا, combining e\u0301 a\u0308 Z\u0335\u0321, lone \ud800 and \udc00 surrogates, separators \u2028 \u2029, controls \u0000\u0001\u001f\u007f \t\r\n end")]));
			s.append(assistant([text("Echo: 🦀 «ok» — 中文 \ud83d"), toolCall("toolu_uni", "write", { path: "ファイル.txt", content: "ñ\u00e9\u0301 \udfff", "🔑": "value" })]));
			s.append(toolResult("toolu_uni", "write", "wrote 12 bytes to ファイル.txt ✓"));
			s.append(assistant([text("تم")]));
			s.label(u, "ラベル 🏷️");
		},
	},
	{
		name: "long-tool-output",
		description: "a tool result of about 24 KB of text, and a multi-line assistant answer",
		run(s, x) {
			opening(s, x);
			s.append(user([text("cat the log")]));
			s.append(assistant([toolCall("toolu_log", "bash", { command: "cat build.log" })]));
			const lines = [];
			for (let i = 0; i < 400; i++) lines.push(`[${String(i).padStart(4, "0")}] compiling crate_${i % 37} v0.${i % 11}.${i % 7} (/work/crates/crate_${i % 37})`);
			s.append(toolResult("toolu_log", "bash", lines.join("\n"), { details: { truncated: false, lines: lines.length } }));
			s.append(assistant([text(Array.from({ length: 30 }, (_, i) => `Line ${i + 1} of the summary.`).join("\n"))]));
		},
	},
	{
		name: "session-name",
		description: x => (x.omp ? "session title set by the user, then renamed (title_change entries, title slot)" : "session_info names: set, renamed, cleared with whitespace"),
		async run(s, x) {
			opening(s, x);
			exchange(s, "name this session", "ok");
			await s.name("First name");
			exchange(s, "rename it", "ok");
			await s.name("Second name: ünïcødé 📛");
			if (!x.omp) {
				exchange(s, "now clear it", "ok");
				await s.name("   ");
			}
		},
	},
	{
		name: "bash-execution",
		description: "bashExecution messages: included, excluded (!! prefix), no excludeFromContext key, non-zero exit, cancelled, truncated with full output path",
		run(s, x) {
			opening(s, x);
			s.append(B.bashExecution("ls", "a\nb\n", { exitCode: 0, excludeFromContext: false }));
			s.append(B.bashExecution("secret-cmd", "hidden output", { exitCode: 0, excludeFromContext: true }));
			s.append(B.bashExecution("false", "", { exitCode: 1 }));
			s.append(B.bashExecution("sleep 100", "partial", { cancelled: true, excludeFromContext: false }));
			s.append(B.bashExecution("yes | head -c 1000000", "y\ny\n", { exitCode: 0, truncated: true, fullOutputPath: "/tmp/pi-bash-0001.log", excludeFromContext: false }));
			exchange(s, "what did those commands do?", "They listed files, failed, got cancelled and printed a lot.");
		},
	},
	{
		name: "custom-role-message",
		description: "a message entry with role custom appended directly (appendMessage), display true and false",
		run(s, x) {
			opening(s, x);
			s.append(user([text("hello")]));
			s.append({ role: "custom", customType: "direct", content: "direct custom message", display: true, timestamp: B.now() });
			s.append({ role: "custom", customType: "direct-hidden", content: [text("hidden one")], display: false, details: { k: 1 }, timestamp: B.now() });
			s.append(assistant([text("seen")]));
		},
	},
	{
		name: "numbers-and-usage",
		description: "usage costs that need JS number formatting (0.1+0.2, 1e-7, 1e21, -0), integer-like object keys",
		run(s, x) {
			opening(s, x);
			s.append(user([text("numbers")]));
			const u = B.usage(7, 3);
			u.cost = { input: 0.1 + 0.2, output: 1e-7, cacheRead: 0.000001, cacheWrite: 1e21, total: -0 };
			s.append(assistant([text("see usage"), toolCall("toolu_n", "calc", { "10": "ten", "1": "one", z: 2.5, big: 123456789012345680000, small: 5e-324 })], { usage: u }));
			s.append(toolResult("toolu_n", "calc", "3", { details: { value: 0.30000000000000004, neg: -1.5e-10 } }));
			s.append(assistant([text("done")], { usage: B.usage(0, 0) }));
		},
	},
	{
		name: "summary-formatting",
		description: "compaction and branch summaries with trailing spaces, blank-line runs, a table and a code block (omp normalizes rendered templates; pi inserts verbatim)",
		run(s, x) {
			opening(s, x);
			const a = exchange(s, "q1", "a1");
			exchange(s, "q2", "a2");
			const messy = "Line one   \n\n\n\nAfter a blank run\n|  a |b  |\n|:-|-:|\n| 1 |  2 |\n```\ncode with trailing spaces   \n\n\n```\n\n\t\n";
			s.branchWithSummary(a.a, messy);
			const b = exchange(s, "q3", "a3");
			s.compaction(messy, b.u, 999);
			exchange(s, "q4", "a4");
		},
	},
	{
		name: "fork-with-label",
		description: "createBranchedSession (fork/clone) of a branch that has a label entry in the middle, then more turns in the new file",
		run(s, x) {
			opening(s, x);
			const a = exchange(s, "q1", "a1");
			s.label(a.u, "marked");
			exchange(s, "q2 (parent is the label entry)", "a2");
			s.fork(s.leaf());
			exchange(s, "q3 after fork", "a3");
		},
	},
	// ---- omp-only ----------------------------------------------------------------------------
	{
		name: "python-execution",
		only: ["omp"],
		description: "pythonExecution messages (omp): included, excluded, failed, cancelled",
		run(s, x) {
			opening(s, x);
			s.append(B.pythonExecution("print(1+1)", "2\n", { exitCode: 0, excludeFromContext: false }));
			s.append(B.pythonExecution("import secrets", "", { exitCode: 0, excludeFromContext: true }));
			s.append(B.pythonExecution("1/0", "ZeroDivisionError: division by zero", { exitCode: 1 }));
			s.append(B.pythonExecution("while True: pass", "", { cancelled: true }));
			exchange(s, "what happened?", "Python ran four times.");
		},
	},
	{
		name: "developer-messages",
		only: ["omp"],
		description: "developer-role messages (omp) with and without attribution, string and array content",
		run(s, x) {
			opening(s, x);
			s.append(B.developer("Harness note: the repository is read-only."));
			s.append(user([text("fix the bug")]));
			s.append(B.developer([text("Reminder: run tests after edits.")], { attribution: "user" }));
			s.append(assistant([text("I will, after reading the code.")]));
		},
	},
	{
		name: "steering-user-messages",
		only: ["omp"],
		description: "steering user messages (steering: true) with string, array and empty content; wrapped by the agent loop",
		run(s, x) {
			opening(s, x);
			s.append(user([text("refactor module a")]));
			s.append(assistant([text("Working on it"), toolCall("toolu_s", "read", { path: "a.rs" })]));
			s.append(toolResult("toolu_s", "read", "fn a() {}"));
			s.append(user("actually, do module b first", { steering: true }));
			s.append(user([text("and keep the API"), image(B.SMALL_PNG)], { steering: true }));
			s.append(user([], { steering: true }));
			s.append(assistant([text("Switching to module b, keeping the API.")]));
		},
	},
	{
		name: "reset-boundaries",
		only: ["omp"],
		description: "/clear reset boundaries: one after a compaction (wins), one before a later compaction (superseded)",
		run(s, x) {
			opening(s, x);
			const a = exchange(s, "before anything", "ok");
			s.resetBoundary();
			const b = exchange(s, "after first clear", "ok");
			s.compaction("Compaction after the first clear", b.u, 900);
			exchange(s, "after compaction", "ok");
			const tipCompaction = s.leaf();
			s.resetBoundary();
			exchange(s, "after second clear", "ok");
			s.branch(tipCompaction);
			exchange(s, "side branch without the second clear", "ok");
			return { extraLeaves: [a.a] };
		},
	},
	{
		name: "retry-recovery",
		only: ["omp"],
		description: "failed assistant turns marked with retryRecovery (recovered and superseded) via rewriteEntries",
		async run(s, x) {
			opening(s, x);
			s.append(user([text("answer please")]));
			const failed = s.append(assistant([text("partial before rate limit")], { stopReason: "error", errorMessage: "429 rate_limit_error" }));
			const good = s.append(assistant([text("The answer.")]));
			s.append(user([text("again")]));
			const failed2 = s.append(assistant([text("half")], { stopReason: "error", errorMessage: "overloaded" }));
			s.append(user([text("give up")]));
			s.append(assistant([text("OK.")]));
			await s.retryRecovery(failed, { kind: "auto-retry", status: "recovered", attempt: 1, recoveredAt: B.nowIso(), recovery: "credential", note: "rate-limited; switched account; retried", supersededBy: { timestamp: B.now(), provider: "anthropic", model: "claude-sonnet-4-5" } });
			await s.retryRecovery(failed2, { kind: "auto-retry", status: "superseded", attempt: 2, recovery: "plain", note: "error; retried" });
			return { extraLeaves: [good] };
		},
	},
	{
		name: "ttsr-mode-service-tier",
		only: ["omp"],
		description: "ttsr injections (union of rules), mode changes with data, service tier changes (object and legacy string)",
		run(s, x) {
			opening(s, x);
			s.ttsr(["no-unwrap", "prefer-iterators"]);
			exchange(s, "plan it", "planning");
			s.mode("plan", { planFile: "PLAN.md" });
			s.serviceTier({ openai: "priority", anthropic: "default" });
			s.ttsr(["prefer-iterators", "small-functions"]);
			exchange(s, "now do it", "doing");
			const beforeLegacy = s.leaf();
			s.serviceTier("claude-only");
			s.mode("none");
			exchange(s, "done?", "done");
			return { extraLeaves: [beforeLegacy] };
		},
	},
	{
		name: "context-notes",
		only: ["omp"],
		description: "experimental_context_notes custom entries (omp injects the latest notes as a custom message first)",
		run(s, x) {
			opening(s, x);
			s.custom("experimental_context_notes", { version: 1, text: "- remember the user prefers tabs" });
			exchange(s, "format this", "formatted with tabs");
			s.custom("experimental_context_notes", { version: 1, text: "- prefers tabs\n- project uses edition 2024" });
			exchange(s, "and this", "done");
		},
	},
	{
		name: "side-branch-usage-and-message",
		only: ["omp"],
		description: "model_usage and appendMessageToBranch on a non-active branch: the last line is not on the active branch",
		run(s, x) {
			opening(s, x);
			const a = exchange(s, "main", "main answer");
			exchange(s, "continue", "continued");
			s.modelUsage({ purpose: "title", api: "anthropic-messages", provider: "anthropic", model: "claude-haiku-4-5", usage: B.usage(50, 8), stopReason: "stop" }, a.a);
			s.appendToBranch(user([text("side message appended without moving the leaf")]), a.a);
		},
	},
	{
		name: "fallback-interrupted-pair",
		only: ["omp"],
		description: "an aborted turn followed by the interrupted-thinking custom message (kept as a pair)",
		run(s, x) {
			opening(s, x, { level: "high" });
			s.append(user([text("long task")]));
			s.append(assistant([text("Starting"), thinking("unsigned partial thought")], { stopReason: "aborted", errorMessage: "Interrupted by user" }));
			s.customMessage("interrupted-thinking", "Your previous turn was interrupted while thinking.", false);
			s.append(user([text("continue")]));
			s.append(assistant([text("Continuing.")]));
		},
	},
	{
		name: "compaction-provider-payloads",
		only: ["omp"],
		description: "omp compactions carrying provider payloads: Anthropic server compaction (main tip) and OpenAI remote replacement history (side tip), plus shortSummary/method/tokensAfter",
		run(s, x) {
			opening(s, x);
			const a = exchange(s, "one", "1");
			const kept = exchange(s, "two", "2");
			const beforeCompaction = s.leaf();
			s.compaction("Anthropic-compacted summary", kept.u, 5000, {
				shortSummary: "short",
				method: "remote",
				tokensAfter: 900,
				preserveData: { anthropicCompaction: { provider: "anthropic", content: "server summary text", encryptedContent: "enc==", model: "claude-sonnet-4-5", usedTokens: 4100 } },
			});
			exchange(s, "three", "3");
			s.branch(beforeCompaction);
			s.compaction("OpenAI remote summary", "", 6000, {
				method: "remote",
				providerReplayThroughEntryId: a.a,
				preserveData: { openaiRemoteCompaction: { provider: "openai", replacementHistory: [{ type: "message", role: "user", content: [{ type: "input_text", text: "one" }] }, { type: "compaction", encrypted_content: "opaque" }], usedTokens: 3000 } },
			});
			exchange(s, "four", "4", { provider: "openai", model: "gpt-5", api: "openai-responses" });
		},
	},
	{
		name: "compaction-handoff-and-rollover",
		only: ["omp"],
		description: "a handoff compaction (HANDOFF template); on side tips, experimental-context-rollover compactions that recover the latest user request (kept id after it) or not (kept id empty)",
		run(s, x) {
			opening(s, x);
			exchange(s, "old request", "old answer");
			const latest = s.append(user([text("the latest request before rollover")]));
			const reply = s.append(assistant([text("working on it")]));
			const beforeCompaction = s.leaf();
			s.compaction("Handoff notes for the next agent.", latest, 4000, { method: "handoff" });
			exchange(s, "after handoff", "ok");
			s.branch(beforeCompaction);
			s.compaction("Rollover summary", reply, 4000, { details: { kind: "experimental-context-rollover", notes: 1 } });
			exchange(s, "after first rollover", "ok");
			s.branch(beforeCompaction);
			s.compaction("Rollover summary keeping nothing", "", 4000, { details: { kind: "experimental-context-rollover" } });
			exchange(s, "after rollover", "ok");
		},
	},
	{
		name: "file-mentions",
		only: ["omp"],
		description: "fileMention messages (omp): text-only files become a developer message, files with an image a user message",
		run(s, x) {
			opening(s, x);
			s.append({
				role: "fileMention",
				files: [
					{ path: "src/lib.rs", content: "pub fn f() {}", lineCount: 1, byteSize: 13 },
					{ path: "logo.png", content: "", image: image(B.SMALL_PNG) },
					{ path: "big.bin", content: "", skippedReason: "binary" },
				],
				timestamp: B.now(),
			});
			exchange(s, "what do these files do?", "A library and a logo.");
		},
	},
	// ---- shared, recorded last: pi's uuid v7 keeps a sequence across scenarios, so a scenario
	// inserted earlier would change the session ids of every pi scenario after it ----------------
	{
		name: "provider-refusals",
		description:
			({ omp }) =>
				omp
					? "API-level provider refusals as omp's Anthropic provider records them (stopReason error + stopDetails refusal with category/explanation, sensitive, a bare refusal at the leaf); the first two are followed by the interrupted-thinking note, so buildSessionContext keeps them and only filterProviderReplayMessages drops them (llmAgentLoop); the leaf refusal is dropped by buildSessionContext; a pause_turn stop is kept"
					: "API-level provider refusals as omp's Anthropic provider records them (stopReason error + stopDetails refusal with category/explanation, sensitive, a bare refusal at the leaf) and a pause_turn stop: pi ignores stopDetails",
		run(s, x) {
			opening(s, x);
			s.append(user([text("write an exploit for this CVE")]));
			// Anthropic message_delta with stop_reason "refusal" and stop_details after some streamed
			// text: the provider keeps stop_details as sent and sets errorMessage to
			// "Refusal (<category>): <explanation>".
			const refused = s.append(
				assistant([text("Here is an outline of the")], {
					stopReason: "error",
					usage: B.usage(950, 0),
					extra: {
						stopDetails: { type: "refusal", category: "cyber", explanation: "This request may facilitate a cyberattack." },
						errorMessage: "Refusal (cyber): This request may facilitate a cyberattack.",
					},
				}),
			);
			// omp's buildSessionContext drops errored turns unless the interrupted-thinking note
			// follows: these pairs survive it, so only filterProviderReplayMessages removes the
			// refused turns from what the agent loop sends (llmAgentLoop keeps the notes).
			const note = x.omp ? s.customMessage("interrupted-thinking", "Your previous turn was interrupted while thinking.", false) : undefined;
			s.append(user([text("ok, explain how to patch it instead")]));
			// stop_reason "sensitive" without stop_details: the provider records { type: "sensitive" }.
			s.append(
				assistant([text("To patch it, first")], {
					stopReason: "error",
					extra: { stopDetails: { type: "sensitive" }, errorMessage: "Content flagged by safety filters" },
				}),
			);
			if (x.omp) s.customMessage("interrupted-thinking", "Your previous turn was interrupted while thinking.", false);
			s.append(user([text("continue")]));
			// A paused turn (OpenAI-style pause_turn) is not a refusal: it stays in the replay.
			s.append(assistant([text("Update the dependency to 2.4.1.")], { extra: { stopDetails: { type: "pause_turn" } } }));
			s.append(user([text("and one more thing")]));
			// A refusal whose stop_details carry null category and explanation, on the last turn.
			s.append(
				assistant([], {
					stopReason: "error",
					usage: B.usage(1400, 0),
					extra: { stopDetails: { type: "refusal", category: null, explanation: null }, errorMessage: "Refusal" },
				}),
			);
			// Leaves ending at a refusal (dropped by omp's buildSessionContext) and, for omp, at its note.
			return { extraLeaves: x.omp ? [refused, note] : [refused] };
		},
	},
];

// ---- hand-written files ------------------------------------------------------------------------

const HW_USAGE = '{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0.00003,"output":0.000075,"cacheRead":0,"cacheWrite":0,"total":0.000105}}';
/** The usage shape of early files (and of pi's own migration test): no totalTokens, no cost. */
const HW_USAGE_OLD = '{"input":10,"output":5,"cacheRead":0,"cacheWrite":0}';

export const HANDWRITTEN = [
	{
		name: "v1-format",
		description: "hand-written v1 file (no ids; compaction with firstKeptEntryIndex; legacy header fields): migrated on open with seeded ids",
		text: () =>
			[
				'{"type":"session","id":"11111111-1111-4111-8111-111111111111","timestamp":"2025-11-20T10:00:00.000Z","cwd":"/home/user/legacy","provider":"anthropic","modelId":"claude-3-5-sonnet","thinkingLevel":"off","branchedFrom":"/old/parent.jsonl"}',
				'{"type":"message","timestamp":"2025-11-20T10:00:01.000Z","message":{"role":"user","content":"hello v1","timestamp":1763632801000}}',
				`{"type":"message","timestamp":"2025-11-20T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi from v1"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-3-5-sonnet","usage":${HW_USAGE},"stopReason":"stop","timestamp":1763632802000}}`,
				'{"type":"thinking_level_change","timestamp":"2025-11-20T10:00:03.000Z","thinkingLevel":"high"}',
				'{"type":"message","timestamp":"2025-11-20T10:00:04.000Z","message":{"role":"user","content":[{"type":"text","text":"second"}],"timestamp":1763632804000}}',
				`{"type":"message","timestamp":"2025-11-20T10:00:05.000Z","message":{"role":"assistant","content":[{"type":"text","text":"second answer"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-3-5-sonnet","usage":${HW_USAGE},"stopReason":"stop","timestamp":1763632805000}}`,
				'{"type":"compaction","timestamp":"2025-11-20T10:00:06.000Z","summary":"v1 summary","firstKeptEntryIndex":4,"tokensBefore":321}',
				'{"type":"message","timestamp":"2025-11-20T10:00:07.000Z","message":{"role":"user","content":"after compaction","timestamp":1763632807000}}',
				`{"type":"message","timestamp":"2025-11-20T10:00:08.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-3-5-sonnet","usage":${HW_USAGE},"stopReason":"stop","timestamp":1763632808000}}`,
				"",
			].join("\n"),
	},
	{
		name: "v2-format",
		description: "hand-written v2 file (ids, hookMessage role, branchedFrom header key): migrated to v3 on open",
		text: () =>
			[
				'{"type":"session","version":2,"id":"22222222-2222-4222-8222-222222222222","timestamp":"2025-12-26T10:00:00.000Z","cwd":"/home/user/v2","branchedFrom":"/old/parent.jsonl"}',
				'{"type":"model_change","id":"a0000001","parentId":null,"timestamp":"2025-12-26T10:00:01.000Z","provider":"openai","modelId":"gpt-4.1"}',
				'{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2025-12-26T10:00:02.000Z","message":{"role":"user","content":"hello v2","timestamp":1766743202000}}',
				'{"type":"message","id":"a0000003","parentId":"a0000002","timestamp":"2025-12-26T10:00:03.000Z","message":{"role":"hookMessage","customType":"legacy-hook","content":"hook said hi","display":true,"timestamp":1766743203000}}',
				`{"type":"message","id":"a0000004","parentId":"a0000003","timestamp":"2025-12-26T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi from v2"}],"api":"openai-responses","provider":"openai","model":"gpt-4.1","usage":${HW_USAGE},"stopReason":"stop","timestamp":1766743204000}}`,
				'{"type":"label","id":"a0000005","parentId":"a0000004","timestamp":"2025-12-26T10:00:05.000Z","targetId":"a0000002","label":"greeting"}',
				"",
			].join("\n"),
	},
	{
		name: "damaged-lines",
		description: "hand-written v3 file with a garbage line, a blank line, a CRLF line, a non-object line and a torn last line",
		text: () =>
			[
				'{"type":"session","version":3,"id":"33333333-3333-4333-8333-333333333333","timestamp":"2026-01-02T10:00:00.000Z","cwd":"/home/user/damaged"}',
				'{"type":"message","id":"b0000001","parentId":null,"timestamp":"2026-01-02T10:00:01.000Z","message":{"role":"user","content":"before garbage","timestamp":1767348001000}}',
				"this is not json",
				"",
				`{"type":"message","id":"b0000002","parentId":"b0000001","timestamp":"2026-01-02T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"answer"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":${HW_USAGE},"stopReason":"stop","timestamp":1767348002000}}\r`,
				"42",
				'{"type":"message","id":"b0000003","parentId":"b0000002","timestamp":"2026-01-02T10:00:03.000Z","message":{"role":"user","content":"after garbage","timestamp":1767348003000}}',
				'{"type":"message","id":"b0000004","parentId":"b0000003","timestamp":"2026-01-02T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"te',
			].join("\n"),
	},
	{
		name: "orphans-and-duplicates",
		description: "hand-written v3 file: an entry whose parent is missing, a duplicated id (last wins), an unknown entry type, an invalid timestamp",
		text: () =>
			[
				'{"type":"session","version":3,"id":"44444444-4444-4444-8444-444444444444","timestamp":"2026-01-03T10:00:00.000Z","cwd":"/home/user/orphans"}',
				'{"type":"message","id":"c0000001","parentId":null,"timestamp":"2026-01-03T10:00:01.000Z","message":{"role":"user","content":"root","timestamp":1767434401000}}',
				`{"type":"message","id":"c0000002","parentId":"c0000001","timestamp":"2026-01-03T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"first version of c0000002"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":${HW_USAGE},"stopReason":"stop","timestamp":1767434402000}}`,
				'{"type":"future_entry_type","id":"c0000003","parentId":"c0000002","timestamp":"2026-01-03T10:00:03.000Z","payload":{"x":1}}',
				`{"type":"message","id":"c0000002","parentId":"c0000001","timestamp":"2026-01-03T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"second version of c0000002"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":${HW_USAGE},"stopReason":"stop","timestamp":1767434404000}}`,
				'{"type":"branch_summary","id":"c0000005","parentId":"c0000003","timestamp":"not a date","fromId":"c0000003","summary":"summary with an invalid timestamp"}',
				'{"type":"message","id":"c0000006","parentId":"cmissing","timestamp":"2026-01-03T10:00:06.000Z","message":{"role":"user","content":"orphan whose parent is missing","timestamp":1767434406000}}',
				`{"type":"message","id":"c0000007","parentId":"c0000006","timestamp":"2026-01-03T10:00:07.000Z","message":{"role":"assistant","content":[{"type":"text","text":"answer on the orphan chain"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":${HW_USAGE},"stopReason":"stop","timestamp":1767434407000}}`,
				"",
			].join("\n"),
		extraLeaves: ["c0000005"],
	},
	{
		name: "usage-without-cost",
		description: "hand-written v3 file whose assistant usage has no totalTokens/cost (as in early files); omp 18.2.3 throws on open",
		text: () =>
			[
				'{"type":"session","version":3,"id":"77777777-7777-4777-8777-777777777777","timestamp":"2026-01-06T10:00:00.000Z","cwd":"/home/user/old-usage"}',
				'{"type":"message","id":"f0000001","parentId":null,"timestamp":"2026-01-06T10:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767693601000}}',
				`{"type":"message","id":"f0000002","parentId":"f0000001","timestamp":"2026-01-06T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":${HW_USAGE_OLD},"stopReason":"stop","timestamp":1767693602000}}`,
				"",
			].join("\n"),
	},
	{
		name: "pi-written-file",
		only: ["omp"],
		description: "a pi-format v3 file (model_change with provider/modelId, session_info, no title slot) read by omp",
		text: () =>
			[
				'{"type":"session","version":3,"id":"55555555-5555-4555-8555-555555555555","timestamp":"2026-01-04T10:00:00.000Z","cwd":"/home/user/pi-project"}',
				'{"type":"model_change","id":"d0000001","parentId":null,"timestamp":"2026-01-04T10:00:01.000Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}',
				'{"type":"thinking_level_change","id":"d0000002","parentId":"d0000001","timestamp":"2026-01-04T10:00:02.000Z","thinkingLevel":"medium"}',
				'{"type":"message","id":"d0000003","parentId":"d0000002","timestamp":"2026-01-04T10:00:03.000Z","message":{"role":"user","content":[{"type":"text","text":"hello from pi"}],"timestamp":1767520803000}}',
				`{"type":"message","id":"d0000004","parentId":"d0000003","timestamp":"2026-01-04T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":${HW_USAGE},"stopReason":"stop","timestamp":1767520804000}}`,
				'{"type":"session_info","id":"d0000005","parentId":"d0000004","timestamp":"2026-01-04T10:00:05.000Z","name":"pi session name"}',
				'{"type":"custom_message","customType":"note","content":"a pi custom message","display":true,"id":"d0000006","parentId":"d0000005","timestamp":"2026-01-04T10:00:06.000Z"}',
				`{"type":"message","id":"d0000007","parentId":"d0000006","timestamp":"2026-01-04T10:00:07.000Z","message":{"role":"assistant","content":[{"type":"text","text":"seen the note"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":${HW_USAGE},"stopReason":"stop","timestamp":1767520807000}}`,
				"",
			].join("\n"),
	},
	{
		name: "parent-cycle",
		only: ["omp"],
		description: "hand-written file whose entries form a parent cycle (omp stops at the repeat; pi 0.73.1 hangs, so it is omp-only)",
		text: () =>
			[
				'{"type":"session","version":3,"id":"66666666-6666-4666-8666-666666666666","timestamp":"2026-01-05T10:00:00.000Z","cwd":"/home/user/cycle"}',
				'{"type":"message","id":"e0000001","parentId":"e0000002","timestamp":"2026-01-05T10:00:01.000Z","message":{"role":"user","content":"one","timestamp":1767607201000}}',
				`{"type":"message","id":"e0000002","parentId":"e0000001","timestamp":"2026-01-05T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"two"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":${HW_USAGE},"stopReason":"stop","timestamp":1767607202000}}`,
				"",
			].join("\n"),
	},
];
