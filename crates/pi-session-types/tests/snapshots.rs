//! insta snapshots of the typed Debug form of representative lines, one snapshot per entry
//! type (several lines each, covering both dialects).

use pi_session_types::parse_line;

const E: &str = r#""id":"a1b2c3d4","parentId":"00ff00ff","timestamp":"2026-01-15T09:00:05.000Z""#;

fn lines_by_type() -> Vec<(&'static str, Vec<String>)> {
    let e = |body: &str| format!("{{{body}}}").replace("ENV", E);
    vec![
        ("title_slot", vec![
            r#"{"type":"title","v":1,"title":"Fix the build","source":"user","updatedAt":"2026-01-15T09:00:00.000Z","pad":"    "}"#.to_string(),
            // v:2 is not a valid slot: it is an ordinary unknown entry, as omp treats it.
            r#"{"type":"title","v":2,"title":"x","updatedAt":"2026-01-15T09:00:00.000Z","pad":""}"#.to_string(),
        ]),
        ("header", vec![
            r#"{"type":"session","version":3,"id":"019bc0e2-1280-72da-87d8-47a245dc00f5","timestamp":"2026-01-15T09:00:00.000Z","cwd":"/home/user/project","parentSession":"/p/parent.jsonl"}"#.to_string(),
            r#"{"type":"session","id":"v1","timestamp":"2025-11-13T10:00:00.000Z","cwd":"/w","provider":"anthropic","modelId":"claude-sonnet-4-5","thinkingLevel":"off","branchedFrom":"/w/old.jsonl"}"#.to_string(),
            r#"{"type":"session","version":3,"id":"s1","title":"Named","titleSource":"user","timestamp":"2026-01-15T09:00:00.000Z","cwd":"/w","additionalDirectories":["/x"],"parentSession":"s0","providerPromptCacheKey":"s0","previousSessionFiles":["/old.jsonl"]}"#.to_string(),
            r#"{"type":"session","id":42}"#.to_string(),
        ]),
        ("message_user", vec![
            e(r#""type":"message",ENV,"message":{"role":"user","content":[{"type":"text","text":"first try"}],"timestamp":1768467602000}"#),
            e(r#""type":"message",ENV,"message":{"role":"user","content":"steer now","synthetic":false,"steering":true,"attribution":"user","timestamp":1768467602000}"#),
            e(r#""type":"message",ENV,"message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"blob:sha256:0000000000000000000000000000000000000000000000000000000000000000","mimeType":"image/png"}],"attribution":"user","timestamp":1768467602000,"attachments":[{"kind":"pdf","name":"r.pdf","path":"docs/r.pdf","mimeType":"application/pdf","about":"2 pages","pages":2}],"steering":true,"ask":"q-17","from":"phone-2"}"#),
        ]),
        ("message_developer_system", vec![
            e(r#""type":"message",ENV,"message":{"role":"developer","content":"Harness note: read-only.","attribution":"agent","synthetic":true,"timestamp":1768467602000}"#),
            e(r#""type":"message",ENV,"message":{"role":"system","content":"You are helpful.","sections":{"rules":"<rules/>","old":null},"toolsAdded":[{"name":"read","description":"Read","parameters":{}}],"toolsRemoved":[{"name":"bash"}],"timestamp":1768467602000}"#),
        ]),
        ("message_assistant", vec![
            e(r#""type":"message",ENV,"message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"},{"type":"text","text":"Hi","textSignature":"{\"v\":1,\"id\":\"msg_1\"}"},{"type":"toolCall","id":"call_1|fc_1","name":"read","arguments":{"path":"a.rs"},"thoughtSignature":"ts"}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.30000000000000004}},"stopReason":"toolUse","timestamp":1768467602000,"responseId":"resp_1"}"#),
            e(r#""type":"message",ENV,"message":{"role":"assistant","content":[{"type":"redactedThinking","data":"opaque"},{"type":"thinking","thinking":"[Reasoning redacted]","thinkingSignature":"x","redacted":true}],"api":"anthropic-messages","provider":"anthropic","model":"claude","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"reasoning":1,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0,"totalFromProvider":true},"cacheWrite1h":2},"stopReason":"error","timestamp":1768467602000,"errorMessage":"overloaded","duration":1200,"ttft":300,"retryRecovery":{"kind":"auto-retry","status":"superseded","attempt":1,"recovery":"plain","note":"error; retried"}}"#),
            e(r#""type":"message",ENV,"message":{"role":"assistant","content":[],"api":"x","provider":"y","model":"z","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0},"stopReason":"deferred","timestamp":1.5,"deferred":{"provider":"y","modelId":"z","api":"x","id":"d1"}}"#),
        ]),
        ("message_tool_result", vec![
            e(r#""type":"message",ENV,"message":{"role":"toolResult","toolCallId":"toolu_e1","toolName":"edit","content":[{"type":"text","text":"Tool was not executed."}],"details":{"__synthetic":true,"source":"assistant_stop_aborted","executed":false},"isError":true,"timestamp":1768467604000}"#),
            e(r#""type":"message",ENV,"message":{"role":"toolResult","toolCallId":"t2","toolName":"task","content":[{"type":"image","data":"iVBOR","mimeType":"image/png"}],"isError":false,"timestamp":1768467604000,"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"durationMs":12}"#),
        ]),
        ("message_other_roles", vec![
            e(r#""type":"message",ENV,"message":{"role":"bashExecution","command":"ls","output":"a\nb\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1768467602000,"excludeFromContext":false}"#),
            e(r#""type":"message",ENV,"message":{"role":"pythonExecution","code":"print(1+1)","output":"2\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1768467602000}"#),
            e(r#""type":"message",ENV,"message":{"role":"fileMention","files":[{"path":"src/lib.rs","content":"pub fn f() {}","lineCount":1,"byteSize":13}],"timestamp":1768467602000}"#),
            e(r#""type":"message",ENV,"message":{"role":"custom","customType":"direct","content":"direct custom message","display":true,"timestamp":1768467603000}"#),
            e(r#""type":"message",ENV,"message":{"role":"hookMessage","customType":"legacy-hook","content":"hook said hi","display":true,"timestamp":1766743203000}"#),
            e(r#""type":"message",ENV,"message":{"role":"branchSummary","summary":"s","fromId":null,"timestamp":1}"#),
            e(r#""type":"message",ENV,"message":{"role":"compactionSummary","summary":"s","tokensBefore":100,"timestamp":1}"#),
            e(r#""type":"message",ENV,"message":{"role":"robot","beep":true}"#),
            e(r#""type":"message",ENV,"message":{"role":"user","content":"x","timestamp":"not a number"}"#),
        ]),
        ("model_change", vec![
            e(r#""type":"model_change",ENV,"provider":"anthropic","modelId":"claude-sonnet-4-5""#),
            e(r#""type":"model_change",ENV,"model":"openrouter/meta/llama-4","role":"fallback","resolvedModelIsFallback":true"#),
        ]),
        ("thinking_level_change", vec![
            e(r#""type":"thinking_level_change",ENV,"thinkingLevel":"medium""#),
            e(r#""type":"thinking_level_change",ENV,"thinkingLevel":null,"configured":null"#),
            e(r#""type":"thinking_level_change",ENV,"thinkingLevel":"high","configured":"auto""#),
        ]),
        ("compaction", vec![
            e(r#""type":"compaction",ENV,"summary":"Goal: ship","firstKeptEntryId":"e1","tokensBefore":5000,"details":{"readFiles":[],"modifiedFiles":["a"]},"fromHook":false"#),
            e(r#""type":"compaction",ENV,"summary":"Handoff","shortSummary":"h","firstKeptEntryId":"","tokensBefore":4000,"tokensAfter":900,"method":"handoff","providerReplayThroughEntryId":"e9","fromExtension":false,"preserveData":{"snapcompact":{"frames":[],"totalChars":0,"truncatedChars":0}},"warning":"big""#),
            r#"{"type":"compaction","timestamp":"2025-11-20T10:00:00.000Z","summary":"v1","firstKeptEntryIndex":4,"tokensBefore":100}"#.to_string(),
            e(r#""type":"compaction",ENV,"summary":"s","firstKeptEntryId":"a1b2c3d4","tokensBefore":1,"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"fromHook":false,"systemMessage":{"role":"system","content":"sys","timestamp":1}"#),
        ]),
        ("branch_summary", vec![
            e(r#""type":"branch_summary",ENV,"fromId":"root","summary":"Tried option A.","details":{"readFiles":["x.rs"],"modifiedFiles":[]},"fromHook":false"#),
            e(r#""type":"branch_summary",ENV,"fromId":"e5","summary":"","details":{"kind":"discarded-entry-branch","discardedEntryId":"e6"},"fromExtension":false"#),
        ]),
        ("custom", vec![
            format!(r#"{{"type":"custom","customType":"experimental_context_notes","data":{{"version":1,"text":"- tabs"}},{E}}}"#),
            format!(r#"{{"type":"custom","customType":"session_exit",{E}}}"#),
        ]),
        ("custom_message", vec![
            format!(r#"{{"type":"custom_message","customType":"reminder","content":"Run the tests.","display":true,"attribution":"agent",{E}}}"#),
            format!(r#"{{"type":"custom_message","customType":"interrupted-thinking","content":[{{"type":"text","text":"t"}}],"display":false,"details":{{"blockCount":2}},{E}}}"#),
        ]),
        ("label", vec![
            e(r#""type":"label",ENV,"targetId":"e3f81c40","label":"start""#),
            e(r#""type":"label",ENV,"targetId":"e3f81c40""#),
        ]),
        ("session_info", vec![e(r#""type":"session_info",ENV,"name":"pi session name""#)]),
        ("usage", vec![
            e(r#""type":"usage",ENV,"kind":"cache_warm","provider":"anthropic","model":"claude","usage":{"input":1,"output":0,"cacheRead":5,"cacheWrite":0,"totalTokens":6,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"note":"warm""#),
        ]),
        ("context_edit", vec![
            e(r#""type":"context_edit",ENV,"targetId":"e2","replacement":null"#),
            e(r#""type":"context_edit",ENV,"targetId":"e2","replacement":{"content":[{"type":"text","text":"shorter"}]}"#),
        ]),
        ("model_usage", vec![
            e(r#""type":"model_usage",ENV,"purpose":"title","api":"anthropic-messages","provider":"anthropic","model":"claude-haiku-4-5","usage":{"input":50,"output":8,"cacheRead":0,"cacheWrite":0,"totalTokens":58,"cost":{"input":0.00015,"output":0.00012,"cacheRead":0,"cacheWrite":0,"total":0.00027}},"stopReason":"stop""#),
        ]),
        ("service_tier_change", vec![
            e(r#""type":"service_tier_change",ENV,"serviceTier":{"openai":"priority","anthropic":"default"}"#),
            e(r#""type":"service_tier_change",ENV,"serviceTier":"claude-only""#),
            e(r#""type":"service_tier_change",ENV,"serviceTier":null"#),
        ]),
        ("reset_boundary", vec![e(r#""type":"reset_boundary",ENV"#)]),
        ("archive", vec![e(r#""type":"archive",ENV,"targetId":"e7","archived":true"#)]),
        ("title_change", vec![e(r#""type":"title_change",ENV,"title":"Second","source":"auto","previousTitle":"First","trigger":"auto-title""#)]),
        ("ttsr_injection", vec![e(r#""type":"ttsr_injection",ENV,"injectedRules":["no-unwrap","prefer-iterators"]"#)]),
        ("credential_pin", vec![e(r#""type":"credential_pin",ENV,"provider":"anthropic","hash":"ab12""#)]),
        ("session_init", vec![
            e(r#""type":"session_init",ENV,"systemPrompt":"a\n\nb","task":"do it","tools":["read"],"agent":"reviewer","readOnly":true,"compactionThreshold":{"thresholdPercent":80,"thresholdTokens":1000}"#),
            e(r#""type":"session_init",ENV,"systemPrompt":["a","b"],"task":"t","tools":[],"retryFallback":true"#),
        ]),
        ("mode_change", vec![e(r#""type":"mode_change",ENV,"mode":"plan","data":{"planFile":"PLAN.md"}"#)]),
        ("unknown", vec![
            e(r#""type":"future_entry_type",ENV,"payload":{"x":1,"0":2}"#),
            e(r#""type":"label",ENV,"targetId":["not","a","string"]"#),
        ]),
    ]
}

#[test]
fn typed_debug_form_per_entry_type() {
    for (name, lines) in lines_by_type() {
        let parsed: Vec<_> = lines
            .iter()
            .map(|line| {
                let parsed =
                    parse_line(line.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}: {line}"));
                // Every representative line is also written back to the same value.
                let again: serde_json::Value =
                    serde_json::from_str(&pi_session_types::to_js_string(&parsed.value).unwrap())
                        .unwrap();
                assert_eq!(
                    again,
                    serde_json::from_str::<serde_json::Value>(line).unwrap(),
                    "{name}"
                );
                parsed
            })
            .collect();
        insta::assert_debug_snapshot!(name, parsed);
    }
}
