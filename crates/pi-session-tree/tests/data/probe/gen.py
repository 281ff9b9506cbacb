import json, random, sys

def iso(i):
    return "2025-03-%02dT%02d:%02d:%02d.%03dZ" % (1 + i // 3600 % 28, i // 600 % 24, i // 10 % 60, i % 60, (i * 37) % 1000)

def usage(r):
    n = r.randint(0, 50)
    return {"input": n, "output": n + 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2 * n + 1,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": n / 1000}}

BLOB_PRESENT = "blob:sha256:" + __import__("hashlib").sha256(b"frame-bytes-1").hexdigest()
BLOB_MISSING = "blob:sha256:" + "0" * 64

DATA_URL_TEXTS = [
    "see ![img](data:image/png;base64,iVBORw0KGgo=) ok",
    "data:text/plain;charset=utf-8;base64,SGVsbG8= tail",
    "x DATA:image/PNG;BASE64,abc [...12ch elided...] def ) y",
    "[a](data:image/png;base64,AAAA",
    "bare data:image/png;base64, end",
    "![x](  data:image/jpeg;base64,/9j/4AAQ  )\u2588next ![y](data:image/gif;base64,R0lG[\u20265ch elided\u2026]AA==)",
    "a]( data:image/png;base64,QUJD) [b] (data:x/y;base64,Zg==)",
]

def frame(r):
    f = {"data": r.choice(["iVBORw0KGgo=", BLOB_PRESENT, BLOB_MISSING, "A" * 1500]), "mimeType": "image/png", "cols": 10, "rows": 10, "chars": 100}
    if r.random() < 0.5:
        f["font"] = "sent"
    if r.random() < 0.3:
        f["detail"] = "low"
    return f

def mutate(r, e):
    t = e["type"]
    roll = r.random()
    if roll < 0.15:
        e["timestamp"] = r.choice(["2025-02-31T00:00:00Z", "2025-01-01", 12345, None, "2025-01-01T10:00:00+02:00"])
    elif t == "message":
        m = e["message"]
        if m.get("role") == "assistant":
            c = r.random()
            if c < 0.2 and m.get("stopReason") != "error":
                m["content"] = "plain string"
            elif c < 0.4:
                m["content"].append({"type": "toolCall", "id": 7, "name": "n", "arguments": {}})
            elif c < 0.5:
                m["retryRecovery"] = r.choice([0, "", None, {}])
            elif c < 0.6:
                del m["provider"]
            elif c < 0.7:
                m["content"].append({"type": "mystery"})
            else:
                m["stopReason"] = r.choice(["length", None, "error"])
                if m["stopReason"] == "error" and not isinstance(m["content"], list):
                    m["content"] = []
        elif m.get("role") == "toolResult":
            m["toolCallId"] = r.choice([7, None, "call-x"])
        else:
            m["role"] = r.choice(["developer", "custom", "bashExecution", None])
            if m["role"] == "custom":
                m["customType"] = "skill-prompt"; m["attribution"] = "user"
    elif t == "thinking_level_change":
        e["thinkingLevel"] = r.choice([5, "", False])
        if "configured" in e: e["configured"] = r.choice([0, "", None])
    elif t == "model_change":
        e["model"] = r.choice([0, "", {"a": 1}, "p/m", 17])
        e["role"] = r.choice([None, 3, "temporary", ""])
    elif t == "mode_change":
        if r.random() < 0.5: del e["mode"]
        else: e["data"] = None
    elif t == "custom_message":
        e.pop("display", None); e["customType"] = r.choice([5, None, "x"]); e["attribution"] = r.choice([None, "user", 1])
    elif t == "compaction":
        r.choice([lambda: e.pop("summary", None), lambda: e.pop("tokensBefore", None), lambda: e.update(firstKeptEntryId=None)])()
    elif t == "ttsr_injection":
        e["injectedRules"] = r.choice(["ab", ["r1", "r1", 2, 2.0]])
    elif t == "branch_summary":
        e["summary"] = r.choice([1, 0, {"x": 1}]); e.pop("fromId", None)
    elif t == "label":
        e["label"] = r.choice([0, "x", None])
    elif t == "service_tier_change":
        e["serviceTier"] = r.choice([[], {"openai": "flex", "anthropic": 3}, "scale"])

def gen_case(r, omp, idx, weird=False):
    entries = []
    ids = []
    calls = []
    n = r.randint(1, 22)
    for i in range(n):
        eid = "e%d" % i
        roll = r.random()
        if not ids:
            parent = None
        elif roll < 0.7:
            parent = ids[-1]
        elif roll < 0.85:
            parent = r.choice(ids)
        elif roll < 0.92:
            parent = None
        else:
            parent = "missing%d" % i
        ts = iso(idx * 100 + i) if r.random() > 0.03 else "bogus"
        base = {"id": eid, "parentId": parent, "timestamp": ts}
        kinds = ["user"] * 5 + ["assistant"] * 6 + ["toolResult"] * 3 + ["compaction"] * 2 + ["branch_summary", "custom_message", "custom_message", "custom", "model_change", "thinking_level_change", "label", "session_info", "unknown"]
        if omp:
            kinds += ["reset_boundary", "service_tier_change", "ttsr_injection", "mode_change", "model_change", "notes", "retry"]
        k = r.choice(kinds)
        if k == "user":
            e = {"type": "message", **base, "message": {"role": "user", "content": r.choice(["hi %d" % i, [{"type": "text", "text": "u%d" % i}]]), "timestamp": 1000 + i}}
            if omp and r.random() < 0.2:
                e["message"]["steering"] = True
        elif k in ("assistant", "retry"):
            blocks = []
            for _ in range(r.randint(0, 3)):
                b = r.random()
                if b < 0.3:
                    blocks.append({"type": "text", "text": r.choice(["", "  ", "answer %d" % i])})
                elif b < 0.5:
                    t = {"type": "thinking", "thinking": r.choice(["", "hmm %d" % i])}
                    if r.random() < 0.5:
                        t["thinkingSignature"] = r.choice(["", "sig%d" % i])
                    blocks.append(t)
                elif b < 0.6:
                    blocks.append({"type": "redactedThinking", "data": r.choice(["", "xx"])})
                elif b < 0.65:
                    blocks.append({"type": "fallback", "from": {"model": "a"}, "to": {"model": "b"}})
                else:
                    cid = "call%d_%d" % (i, len(blocks))
                    calls.append(cid)
                    blocks.append({"type": "toolCall", "id": cid, "name": "bash", "arguments": {"command": "ls"}})
            stop = r.choice(["stop", "stop", "toolUse", "error", "aborted"])
            msg = {"role": "assistant", "content": blocks, "api": "anthropic-messages", "provider": r.choice(["anthropic", "openai"]), "model": r.choice(["m1", "m2"]), "usage": usage(r), "stopReason": stop, "timestamp": 1000 + i}
            if stop in ("error", "aborted"):
                msg["errorMessage"] = "boom"
            if k == "retry":
                msg["retryRecovery"] = {"kind": "auto-retry", "status": r.choice(["recovered", "superseded"]), "attempt": 1, "recovery": "plain", "note": "error; retried"}
            e = {"type": "message", **base, "message": msg}
        elif k == "toolResult":
            cid = r.choice(calls) if calls and r.random() < 0.85 else "nocall%d" % i
            e = {"type": "message", **base, "message": {"role": "toolResult", "toolCallId": cid, "toolName": "bash", "content": [{"type": "text", "text": "out"}], "isError": False, "timestamp": 1000 + i}}
        elif k == "compaction":
            e = {"type": "compaction", **base, "summary": "sum %d" % i, "tokensBefore": 100 * i}
            fk = r.random()
            if fk < 0.6 and ids:
                e["firstKeptEntryId"] = r.choice(ids)
            elif fk < 0.75:
                e["firstKeptEntryId"] = ""
            elif fk < 0.9:
                e["firstKeptEntryId"] = "nowhere"
            if omp:
                p = r.random()
                if p < 0.15:
                    e["preserveData"] = {"anthropicCompaction": {"provider": "anthropic", "content": "native", "encryptedContent": r.choice(["", "enc"])}}
                elif p < 0.3:
                    e["preserveData"] = {"openaiRemoteCompaction": {"provider": "openai", "replacementHistory": [{"type": "message"}]}}
                    if ids and r.random() < 0.5:
                        e["providerReplayThroughEntryId"] = r.choice(ids)
                elif p < 0.4:
                    e["details"] = {"kind": "experimental-context-rollover"}
                elif p < 0.5:
                    e["preserveData"] = {"snapcompact": {"frames": [], "totalChars": 3, "truncatedChars": r.choice([0, 5]), "textHead": "head\u2588x", "textTail": r.choice(["", "tail"])}}
                elif p < 0.6:
                    e["preserveData"] = {"snapcompact": {"frames": [frame(r) for _ in range(r.choice([1, 2, 3, 17]))], "totalChars": 3, "truncatedChars": r.choice([0, 2000000]), "textHead": r.choice(["", "head", r.choice(DATA_URL_TEXTS)]), "textTail": r.choice(["", "tail", r.choice(DATA_URL_TEXTS)])}}
                if "anthropicCompaction" in e.get("preserveData", {}) and ids and r.random() < 0.4:
                    e["providerReplayThroughEntryId"] = r.choice(ids)
                if r.random() < 0.3:
                    e["shortSummary"] = "short"
                    e["method"] = "soft"
                    e["tokensAfter"] = 5
        elif k == "branch_summary":
            e = {"type": "branch_summary", **base, "fromId": parent or "root", "summary": r.choice(["", "bs %d" % i])}
        elif k == "custom_message":
            e = {"type": "custom_message", "customType": r.choice(["note", "", "prewalk-plan", "interrupted-thinking", "skill-prompt"]), "content": r.choice(["c%d" % i, [{"type": "text", "text": "cc"}], {"bad": 1}]), "display": r.choice([True, False, "yes"]), **base}
            a = r.random()
            if a < 0.3:
                e["attribution"] = "user"
            elif a < 0.5:
                e["attribution"] = "other"
            if r.random() < 0.3:
                e["details"] = {"k": i}
        elif k == "custom":
            e = {"type": "custom", "customType": "ext", "data": {"i": i}, **base}
        elif k == "notes":
            e = {"type": "custom", "customType": "experimental_context_notes", "data": r.choice([{"version": 1, "text": "note %d\n\n\n| a |  b |" % i}, {"version": 1, "text": ""}, {"version": 2, "text": "x"}]), **base}
        elif k == "model_change":
            if omp and r.random() < 0.7:
                e = {"type": "model_change", **base, "model": r.choice(["anthropic/m9", "openai/gpt/x"]), "resolvedModelIsFallback": False}
                ro = r.random()
                if ro < 0.3:
                    e["role"] = r.choice(["default", "temporary", "fallback", "smol"])
            else:
                e = {"type": "model_change", **base, "provider": "openai", "modelId": "gpt-%d" % i}
        elif k == "thinking_level_change":
            e = {"type": "thinking_level_change", **base, "thinkingLevel": r.choice(["high", "low", None])}
            if omp:
                e["configured"] = r.choice([None, "auto", "medium"])
        elif k == "label":
            e = {"type": "label", **base, "targetId": r.choice(ids) if ids else "x", "label": r.choice(["", "mark"])}
        elif k == "session_info":
            e = {"type": "session_info", **base, "name": "n%d" % i}
        elif k == "reset_boundary":
            e = {"type": "reset_boundary", **base}
        elif k == "service_tier_change":
            e = {"type": "service_tier_change", **base, "serviceTier": r.choice(["priority", "flex", "openai-only", "bogus", None, {"anthropic": "priority", "google": "x"}])}
        elif k == "ttsr_injection":
            e = {"type": "ttsr_injection", **base, "injectedRules": r.sample(["r1", "r2", "r3"], r.randint(0, 2))}
        elif k == "mode_change":
            e = {"type": "mode_change", **base, "mode": r.choice(["plan", "none"])}
            if r.random() < 0.5:
                e["data"] = {"step": i}
        else:
            e = {"type": "brand_new_type", **base, "payload": i}
        if weird and r.random() < 0.25:
            mutate(r, e)
        entries.append(e)
        ids.append(eid)
    lr = r.random()
    case = {"entries": entries}
    if lr < 0.5:
        pass
    elif lr < 0.85:
        case["leafId"] = r.choice(ids)
    elif lr < 0.93:
        case["leafId"] = None
    else:
        case["leafId"] = "unknown-leaf"
    return case

def main():
    which = sys.argv[1]
    count = int(sys.argv[2])
    r = random.Random(4 if which == "omp" else 7)
    cases = [gen_case(r, which == "omp", i) for i in range(count)]
    cases += [gen_case(r, which == "omp", count + i, weird=True) for i in range(count // 2)]
    if which == "omp":
        # cycles and duplicate ids: omp terminates; pi hangs on cycles.
        cases.append({"entries": [
            {"type": "message", "id": "a", "parentId": "c", "timestamp": iso(1), "message": {"role": "user", "content": "a", "timestamp": 1}},
            {"type": "message", "id": "b", "parentId": "a", "timestamp": iso(2), "message": {"role": "user", "content": "b", "timestamp": 2}},
            {"type": "message", "id": "c", "parentId": "b", "timestamp": iso(3), "message": {"role": "user", "content": "c", "timestamp": 3}}]})
        cases.append({"entries": [
            {"type": "message", "id": "a", "parentId": None, "timestamp": iso(1), "message": {"role": "user", "content": "a1", "timestamp": 1}},
            {"type": "message", "id": "b", "parentId": "a", "timestamp": iso(2), "message": {"role": "user", "content": "b", "timestamp": 2}},
            {"type": "message", "id": "a", "parentId": None, "timestamp": iso(3), "message": {"role": "user", "content": "a2", "timestamp": 3}}], "leafId": "b"})
    json.dump(cases, sys.stdout)

main()
