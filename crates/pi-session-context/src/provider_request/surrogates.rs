//! What pi-ai does with lone UTF-16 surrogates before a body leaves the process.
//!
//! A session may hold lone surrogates (JavaScript strings can; we carry them as U+10F800+k,
//! see `pi_session_types::js`). Providers reject them, so pi-ai cleans the strings it sends:
//!
//! - pi 0.73.1's `@mariozechner/pi-ai` calls `sanitizeSurrogates` (removes each lone surrogate)
//!   on the text it sends: the system prompt, user text (a string or text blocks), assistant
//!   text and thinking, and tool-result text — in every API. Tool-call ids, names and arguments
//!   are left alone (the Chat and Responses APIs send arguments as `JSON.stringify` text, where a
//!   lone surrogate is the six characters `\udxxx`; Anthropic and Google send the object).
//! - omp 18.2.3's `@oh-my-pi/pi-ai` calls `toWellFormed` (each lone surrogate becomes U+FFFD)
//!   on the same text, and its Anthropic client runs `toWellFormedDeep` over the whole request
//!   body last (tool-call arguments included).
//!
//! Both passes copy nothing when no string holds a lone surrogate.

use std::borrow::Cow;

use pi_session_types::js::{has_lone_surrogate, remove_lone_surrogates, to_well_formed};
use pi_session_types::view::key;
use serde_json::Value;

use super::PiAi;

/// The text cleaning `pi_ai` applies: pi removes lone surrogates, omp replaces them.
fn clean(pi_ai: PiAi, text: &str) -> Cow<'_, str> {
    match pi_ai {
        PiAi::Pi => remove_lone_surrogates(text),
        PiAi::Omp => to_well_formed(text),
    }
}

/// True when any string (key or value) of `value` holds a lone surrogate.
fn holds_lone_surrogate(value: &Value) -> bool {
    match value {
        Value::String(s) => has_lone_surrogate(s),
        Value::Array(items) => items.iter().any(holds_lone_surrogate),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| has_lone_surrogate(k) || holds_lone_surrogate(v)),
        _ => false,
    }
}

/// Replaces `text` in place when cleaning changes it.
fn clean_in_place(pi_ai: PiAi, text: &mut Value) {
    if let Value::String(s) = text
        && let Cow::Owned(cleaned) = clean(pi_ai, s)
    {
        *s = cleaned;
    }
}

/// The messages with the text pi-ai cleans cleaned (borrowed when nothing changes): a
/// message's `content` string and its blocks' `text` and `thinking`.
pub(super) fn clean_messages(messages: &[Value], pi_ai: PiAi) -> Cow<'_, [Value]> {
    if !messages.iter().any(holds_lone_surrogate) {
        return Cow::Borrowed(messages);
    }
    let mut messages = messages.to_vec();
    for message in &mut messages {
        let Some(content) = message.get_mut(key::CONTENT) else {
            continue;
        };
        match content {
            Value::Array(blocks) => {
                for block in blocks.iter_mut().filter_map(Value::as_object_mut) {
                    for field in [key::TEXT, key::THINKING] {
                        if let Some(text) = block.get_mut(field) {
                            clean_in_place(pi_ai, text);
                        }
                    }
                }
            }
            text => clean_in_place(pi_ai, text),
        }
    }
    Cow::Owned(messages)
}

/// The system prompt as pi-ai sends it.
pub(super) fn clean_system_prompt(prompt: &str, pi_ai: PiAi) -> Cow<'_, str> {
    clean(pi_ai, prompt)
}

/// omp's `toWellFormedDeep`: every string of `value`, keys included, made well formed.
pub(super) fn well_formed_deep(value: &mut Value) {
    if !holds_lone_surrogate(value) {
        return;
    }
    match value {
        Value::String(s) => {
            if let Cow::Owned(cleaned) = to_well_formed(s) {
                *s = cleaned;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(well_formed_deep),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (k, mut v) in entries {
                well_formed_deep(&mut v);
                map.insert(to_well_formed(&k).into_owned(), v);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LONE: char = '\u{10F83D}'; // carries "\ud83d"

    #[test]
    fn pi_removes_and_omp_replaces_lone_surrogates_in_text_only() {
        let messages = vec![
            json!({"role": "user", "content": format!("a{LONE}b")}),
            json!({"role": "assistant", "content": [
                {"type": "text", "text": format!("t{LONE}")},
                {"type": "thinking", "thinking": format!("{LONE}th")},
                {"type": "toolCall", "id": "c", "name": "w", "arguments": {"p": format!("x{LONE}")}},
            ]}),
        ];
        let pi = clean_messages(&messages, PiAi::Pi);
        assert_eq!(pi[0]["content"], "ab");
        assert_eq!(pi[1]["content"][0]["text"], "t");
        assert_eq!(pi[1]["content"][1]["thinking"], "th");
        assert_eq!(pi[1]["content"][2]["arguments"]["p"], format!("x{LONE}"));
        let omp = clean_messages(&messages, PiAi::Omp);
        assert_eq!(omp[0]["content"], "a\u{fffd}b");
        assert_eq!(omp[1]["content"][1]["thinking"], "\u{fffd}th");
        let clean = vec![json!({"role": "user", "content": "ok 😀"})];
        assert!(matches!(clean_messages(&clean, PiAi::Pi), Cow::Borrowed(_)));
    }

    #[test]
    fn well_formed_deep_reaches_keys_and_arguments() {
        let mut body = json!({"messages": [{"input": {format!("k{LONE}"): [format!("{LONE}")]}}]});
        well_formed_deep(&mut body);
        assert_eq!(
            body,
            json!({"messages": [{"input": {"k\u{fffd}": ["\u{fffd}"]}}]})
        );
    }
}
