//! The page: one self-contained HTML file around the view model.
//!
//! Safety rests on three rules, each kept here and nowhere else:
//! - the data travels as JSON in a `<script type="application/json">` element, with `<`, `>`,
//!   `&`, U+2028 and U+2029 written as `\uXXXX` escapes ([`script_json`]), so no session text can
//!   close the element or start markup;
//! - the only scripts and styles that run are ours, named by their SHA-256 in a
//!   Content-Security-Policy that also forbids every network request ([`content_security_policy`]);
//! - the script puts session text in the page with `textContent` only (see `assets/view.js`).

use base64::Engine;
use sha2::{Digest, Sha256};

/// The page's script (hand-written, no build step).
pub const VIEW_JS: &str = include_str!("../assets/view.js");
/// The page's style.
pub const VIEW_CSS: &str = include_str!("../assets/view.css");
/// The browser page's script (`pi-session serve`'s session list).
pub const LIST_JS: &str = include_str!("../assets/list.js");

/// `'sha256-<base64>'` of an inline script or style, as a CSP source.
fn csp_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The policy of a page running `script` with `style`: nothing from the network, no other
/// script or style, pictures only from `data:`/`blob:` URIs. `connect` adds `connect-src` sources
/// (the browser page asks its own server for the list).
pub fn content_security_policy(script: &str, style: &str, connect: &str) -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data: blob:; connect-src {connect}; base-uri 'none'; form-action 'none'",
        csp_hash(script),
        csp_hash(style),
    )
}

/// `text` with `&`, `<`, `>`, `"` and `'` as character references: safe in element text and in
/// quoted attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Appends JSON text to `out` with `<`, `>`, `&`, U+2028 and U+2029 as `\uXXXX` escapes. Those
/// characters occur in JSON only inside strings, where the escape means the same character, so
/// the result parses to the same value and can sit inside a `<script>` element.
pub fn script_json(json: &[u8], out: &mut Vec<u8>) {
    out.reserve(json.len() + json.len() / 64);
    let mut start = 0;
    let mut i = 0;
    while i < json.len() {
        let escape: Option<(&[u8], usize)> = match json[i] {
            b'<' => Some((b"\\u003c", 1)),
            b'>' => Some((b"\\u003e", 1)),
            b'&' => Some((b"\\u0026", 1)),
            // U+2028 and U+2029 are E2 80 A8 / E2 80 A9 in UTF-8.
            0xE2 if json.get(i + 1) == Some(&0x80) && json.get(i + 2) == Some(&0xA8) => {
                Some((b"\\u2028", 3))
            }
            0xE2 if json.get(i + 1) == Some(&0x80) && json.get(i + 2) == Some(&0xA9) => {
                Some((b"\\u2029", 3))
            }
            _ => None,
        };
        if let Some((replacement, width)) = escape {
            out.extend_from_slice(&json[start..i]);
            out.extend_from_slice(replacement);
            i += width;
            start = i;
        } else {
            i += 1;
        }
    }
    out.extend_from_slice(&json[start..]);
}

/// A whole page: `title` (escaped here), our style and `script`, and `data` (already
/// [`script_json`]-escaped) in `<script type="application/json" id="data">`.
pub fn page(title: &str, script: &str, data: &[u8], connect: &str) -> Vec<u8> {
    let policy = content_security_policy(script, VIEW_CSS, connect);
    let mut out = Vec::with_capacity(data.len() + script.len() + VIEW_CSS.len() + 1024);
    out.extend_from_slice(
        format!(
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"referrer\" content=\"no-referrer\">\n\
             <title>{}</title>\n<style>{VIEW_CSS}</style>\n</head>\n<body>\n\
             <noscript>This page needs JavaScript to show the session.</noscript>\n\
             <script type=\"application/json\" id=\"data\">",
            escape_html(title)
        )
        .as_bytes(),
    );
    out.extend_from_slice(data);
    out.extend_from_slice(b"</script>\n<script>");
    out.extend_from_slice(script.as_bytes());
    out.extend_from_slice(b"</script>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(text: &str) -> String {
        let mut out = Vec::new();
        script_json(text.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn script_json_escapes_what_could_end_the_element_and_keeps_the_value() {
        let value =
            serde_json::json!({"t": "</script><script>alert(1)</script> & \u{2028}\u{2029} é"});
        let text = serde_json::to_string(&value).unwrap();
        let safe = escaped(&text);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('&'));
        assert!(!safe.contains('\u{2028}') && !safe.contains('\u{2029}'));
        assert!(safe.contains('é'));
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn escape_html_escapes_markup_and_quotes() {
        assert_eq!(
            escape_html(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn the_policy_names_our_script_by_hash_and_forbids_the_network() {
        let policy = content_security_policy("a()", "b{}", "'none'");
        assert!(policy.starts_with("default-src 'none'; script-src 'sha256-"));
        assert!(!policy.contains("unsafe"));
        assert!(policy.contains("connect-src 'none'"));
        assert_ne!(csp_hash("a()"), csp_hash("a();"));
    }
}
