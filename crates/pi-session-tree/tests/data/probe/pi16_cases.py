"""Crafted session trees for pi 1.6's buildSessionContext (see README.md).

Each case exercises one of 1.6's context rules: context_edit (null, string
and block replacements, latest wins, edits outside the kept range, odd
replacements), compaction systemMessage, system messages around
firstKeptEntryId, nested compactions and null content. Prints JSON cases."""
import json

T0 = 1768467600000


def ts(n):
    s = n % 60
    m = n // 60
    return f"2026-01-15T09:{m:02d}:{s:02d}.000Z"


class Tree:
    def __init__(self):
        self.entries = []
        self.n = 0
        self.last = None

    def add(self, entry_type, parent="last", **fields):
        self.n += 1
        eid = fields.pop("id", f"e{self.n:02d}")
        entry = {"type": entry_type, "id": eid,
                 "parentId": self.last if parent == "last" else parent,
                 "timestamp": ts(self.n)}
        entry.update(fields)
        self.entries.append(entry)
        self.last = eid
        return eid

    def msg(self, message, **kw):
        message = dict(message)
        message.setdefault("timestamp", T0 + self.n * 1000)
        return self.add("message", message=message, **kw)

    def user(self, text, **kw):
        return self.msg({"role": "user", "content": text}, **kw)

    def assistant(self, text, **kw):
        return self.msg({"role": "assistant", "content": [{"type": "text", "text": text}],
                         "api": "anthropic-messages", "provider": "anthropic",
                         "model": "claude-x", "usage": {"input": 1, "output": 1},
                         "stopReason": "stop"}, **kw)

    def tool_call(self, call_id, **kw):
        return self.msg({"role": "assistant", "content": [
            {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": "a"}}],
            "provider": "openai", "model": "gpt-x", "stopReason": "toolUse"}, **kw)

    def tool_result(self, call_id, text, **kw):
        return self.msg({"role": "toolResult", "toolCallId": call_id, "toolName": "read",
                         "content": [{"type": "text", "text": text}], "isError": False}, **kw)

    def system(self, text, sections=None, **kw):
        m = {"role": "system", "content": text}
        if sections is not None:
            m["sections"] = sections
        return self.msg(m, **kw)

    def edit(self, target, replacement="absent", **kw):
        fields = {"targetId": target}
        if replacement != "absent":
            fields["replacement"] = replacement
        return self.add("context_edit", **fields, **kw)

    def compaction(self, first_kept, summary="S", system_message="absent", **kw):
        fields = {"summary": summary, "firstKeptEntryId": first_kept, "tokensBefore": 1000}
        if system_message != "absent":
            fields["systemMessage"] = system_message
        return self.add("compaction", **fields, **kw)

    def custom(self, content="absent", **kw):
        fields = {"customType": "note", "display": True}
        if content != "absent":
            fields["content"] = content
        return self.add("custom_message", **fields, **kw)


def system_message(text):
    return {"role": "system", "content": text, "sections": {"env": "<env>x</env>"},
            "toolsAdded": [{"name": "read", "description": "Read", "parameters": {"type": "object"}}],
            "timestamp": T0 + 99000}


cases = []


def case(name, tree, leaf="default"):
    c = {"name": name, "entries": tree.entries}
    if leaf != "default":
        c["leafId"] = leaf
    cases.append(c)


# 1. null replacement drops a user message; string replacements per role.
t = Tree()
t.system("You are pi.", {"a": "A"})
u = t.user("drop me")
a = t.assistant("long answer")
c = t.tool_call("call1")
r = t.tool_result("call1", "big output")
u2 = t.user("keep me")
cm = t.custom("custom text")
t.edit(u, None)
t.edit(a, {"content": "short answer"})
t.edit(r, {"content": "trimmed"})
t.edit(u2, {"content": "user string stays a string"})
t.edit(cm, {"content": "custom string stays a string"})
t.add("usage", kind="cache_warm", provider="anthropic", model="claude-x",
      usage={"input": 5, "output": 0})
case("edits-null-and-string-per-role", t)

# 2. block replacements, and the latest edit per target wins (in context-entry order).
t = Tree()
u = t.user("q")
a = t.assistant("first")
t.edit(a, None)
t.edit(a, {"content": [{"type": "text", "text": "blocks"}, {"type": "thinking", "thinking": "t"}]})
t.edit(u, {"content": [{"type": "text", "text": "user blocks"}]})
t.edit(u, {"content": "latest user"})
t.user("after")
case("edits-blocks-and-latest-wins", t)

# 3. odd replacements: {} (content undefined), a primitive, a string on a message with null content.
t = Tree()
u = t.user("q")
a = t.assistant("x")
n = t.msg({"role": "assistant", "content": None, "provider": "p", "model": "m"})
t.edit(u, {})
t.edit(a, "not an object")
t.edit(n, {"content": "filled"})
t.edit("missing-target", None)
case("edits-odd-replacements", t)

# 4. edit without a replacement key throws in pi (our answer: edit ignored, diagnosed).
t = Tree()
u = t.user("q")
t.edit(u)
case("edit-without-replacement-throws", t)

# 5. edit without a replacement on a target with no editable message does not throw.
t = Tree()
b = t.add("branch_summary", fromId="root", summary="went elsewhere")
t.edit(b)
t.user("q")
case("edit-without-replacement-on-branch-summary", t)

# 6. compaction with systemMessage; edits inside and outside the kept range.
t = Tree()
t.system("old prompt", {"s": "1"})
u1 = t.user("old question")
t.assistant("old answer")
t.edit(u1, {"content": "edit before first kept: ignored"})
k = t.user("kept question")
a2 = t.assistant("kept answer")
t.system("mid prompt inside kept range", {"s": "2"})
t.edit(a2, {"content": "edited kept answer"})
t.compaction(k, "Summary one", system_message("replayed prompt"))
t.system("after compaction", {"s": "3"})
t.user("after")
case("compaction-system-message-and-kept-edits", t)

# 7. summarized target (before firstKept) edited after the compaction: edit applies to nothing.
t = Tree()
u1 = t.user("summarized")
k = t.user("kept")
t.compaction(k, "S", None)
t.edit(u1, None)
t.edit(k, {"content": "kept, edited after compaction"})
case("edit-after-compaction-targets", t)

# 8. nested compactions: an older compaction inside the kept range gives nothing.
t = Tree()
t.user("a")
k1 = t.user("b")
c1 = t.compaction(k1, "first summary", system_message("p1"))
t.assistant("c")
t.compaction(c1, "second summary", system_message("p2"))
t.user("d")
case("nested-compaction-kept", t)

# 9. edit targeting the compaction: null drops systemMessage and summary.
t = Tree()
t.user("a")
c1 = t.compaction("e01", "S", system_message("p"))
t.edit(c1, None)
t.user("b")
case("edit-null-on-compaction", t)

# 10. edit targeting the compaction with a string: nothing changes.
t = Tree()
t.user("a")
c1 = t.compaction("e01", "S", system_message("p"))
t.edit(c1, {"content": "ignored"})
t.user("b")
case("edit-string-on-compaction", t)

# 11. compaction keeping nothing (firstKept = its own id), falsy systemMessage values.
t = Tree()
t.user("a")
t.system("dropped", {"x": None})
t.compaction("e03", "S", None, id="e03")
t.user("b")
t.compaction("e04", "S2", "", id="e05")
t.user("c")
case("compaction-keeps-nothing", t)

# 12. null and missing content per role, with and without a compaction.
t = Tree()
t.msg({"role": "system", "content": None})
t.msg({"role": "system"})
t.msg({"role": "user", "content": None})
t.msg({"role": "assistant", "provider": "p", "model": "m"})
t.msg({"role": "toolResult", "toolCallId": "x", "toolName": "y", "content": None, "isError": False})
t.msg({"role": "bashExecution", "command": "ls", "output": None, "content": None})
t.msg({"role": "custom", "customType": "x", "content": None})
t.custom(None)
t.custom()
case("null-content", t)

# 13. branches: the edit lives on another branch.
t = Tree()
root = t.user("root")
a = t.assistant("answer")
t.edit(a, None)
side = t.last
t.user("main", parent=a)
case("edit-on-other-branch", t)
cases.append({"name": "edit-on-side-branch-leaf", "entries": t.entries, "leafId": side})

# 14. system messages without a compaction stay; with settings changes.
t = Tree()
t.system("p", {"a": "1"})
t.add("thinking_level_change", thinkingLevel="high")
t.add("model_change", provider="openai", modelId="gpt-x")
t.user("q")
t.system(["not", "a", "string"])
t.assistant("a")
case("system-messages-without-compaction", t)

# 15. an edit targeting an edit, branch_summary edits, custom edits with blocks.
t = Tree()
b = t.add("branch_summary", fromId="e00", summary="bs")
e = t.edit(b, {"content": "no effect on branchSummary"})
t.edit(e, None)
cm = t.custom([{"type": "text", "text": "c"}])
t.edit(cm, {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]})
b2 = t.add("branch_summary", fromId="e00", summary="bs2")
t.edit(b2, None)
case("edit-targets-misc", t)

# 16. a null leaf and an empty path.
t = Tree()
t.user("q")
cases.append({"name": "null-leaf", "entries": t.entries, "leafId": None})

print(json.dumps(cases, indent=1))
