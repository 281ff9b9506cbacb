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

/// The session page's script (hand-written, no build step): the shared helpers, then the page.
pub const VIEW_JS: &str = concat!(
    include_str!("../assets/common.js"),
    include_str!("../assets/view.js")
);
/// The page's style.
pub const VIEW_CSS: &str = include_str!("../assets/view.css");
/// The session list's script (`pi-session serve`): the shared helpers, then the list.
pub const LIST_JS: &str = concat!(
    include_str!("../assets/common.js"),
    include_str!("../assets/list.js")
);

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

/// Appends `bytes` (JSON text, or a fragment of a JSON string) to `out` with `<`, `>`, `&`,
/// U+2028 and U+2029 as `\uXXXX` escapes. Those characters occur in JSON only inside strings,
/// where the escape means the same character, so the result parses to the same value and can sit
/// inside a `<script>` element.
pub fn script_json(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len());
    escape_runs(bytes, &mut |run| {
        out.extend_from_slice(run);
        Ok(())
    })
    .unwrap_or_default();
}

/// Hands `bytes` to `emit` as runs of unchanged bytes and escapes (see [`script_json`]), found
/// with SIMD searches (`memchr`) for `<`/`>`/`&` and for U+2028/U+2029's lead byte 0xE2.
fn escape_runs(
    bytes: &[u8],
    emit: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let after = |from: usize, found: Option<usize>| found.map(|i| i + from);
    let mut start = 0;
    let mut markup = memchr::memchr3(b'<', b'>', b'&', bytes);
    let mut lead = memchr::memchr(0xE2, bytes);
    loop {
        let (at, escape, width): (usize, &[u8], usize) = match (markup, lead) {
            (None, None) => break,
            (Some(m), l) if l.is_none_or(|l| m < l) => {
                markup = after(m + 1, memchr::memchr3(b'<', b'>', b'&', &bytes[m + 1..]));
                let escape: &[u8] = match bytes[m] {
                    b'<' => b"\\u003c",
                    b'>' => b"\\u003e",
                    _ => b"\\u0026",
                };
                (m, escape, 1)
            }
            (_, None) => break, // unreachable: the arm above takes every markup byte first
            (_, Some(l)) => {
                lead = after(l + 1, memchr::memchr(0xE2, &bytes[l + 1..]));
                match bytes.get(l + 1..l + 3) {
                    Some([0x80, 0xA8]) => (l, b"\\u2028", 3),
                    Some([0x80, 0xA9]) => (l, b"\\u2029", 3),
                    _ => continue,
                }
            }
        };
        emit(&bytes[start..at])?;
        emit(escape)?;
        start = at + width;
    }
    emit(&bytes[start..])
}

/// A `serde_json` formatter that writes [`script_json`]-safe JSON in one pass: every string
/// fragment goes through [`script_json`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ScriptSafe;

impl serde_json::ser::Formatter for ScriptSafe {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        if !pi_session::types::js::has_lone_surrogate(fragment) {
            return escape_runs(fragment.as_bytes(), &mut |run| writer.write_all(run));
        }
        // A lone surrogate (carried as U+10F800+k) goes to the page as its `\udxxx` escape, so
        // `JSON.parse` gives the page the string JavaScript wrote.
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if let Some(unit) = pi_session::types::js::carried_surrogate(c) {
                escape_runs(&fragment.as_bytes()[start..at], &mut |run| {
                    writer.write_all(run)
                })?;
                write!(writer, "\\u{unit:04x}")?;
                start = at + c.len_utf8();
            }
        }
        escape_runs(&fragment.as_bytes()[start..], &mut |run| {
            writer.write_all(run)
        })
    }
}

/// `value` as JSON that can sit inside a `<script>` element (see [`script_json`]), appended to
/// `out` (a `Vec<u8>`, or a writer the page streams to).
pub fn write_script_json<T: serde::Serialize + ?Sized, W: std::io::Write>(
    value: &T,
    out: W,
) -> Result<(), serde_json::Error> {
    let mut serializer = serde_json::Serializer::with_formatter(out, ScriptSafe);
    value.serialize(&mut serializer)
}

/// A whole page: `title` (escaped here), our style and `script`, and the data `write_data`
/// appends (JSON made safe by [`write_script_json`]) in `<script type="application/json"
/// id="data">`. `connect` is the page's `connect-src`.
pub fn page<E>(
    title: &str,
    script: &str,
    connect: &str,
    size_hint: usize,
    write_data: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<Vec<u8>, E> {
    let mut out = Vec::with_capacity(size_hint + script.len() + VIEW_CSS.len() + 1024);
    out.extend_from_slice(page_head(title, script, connect).as_bytes());
    write_data(&mut out)?;
    for part in page_tail(script) {
        out.extend_from_slice(part);
    }
    Ok(out)
}

/// [`page`] written to `out` as it is made (a large page is never held whole).
pub fn write_page<W: std::io::Write + ?Sized, E: From<std::io::Error>>(
    out: &mut W,
    title: &str,
    script: &str,
    connect: &str,
    write_data: impl FnOnce(&mut W) -> Result<(), E>,
) -> Result<(), E> {
    out.write_all(page_head(title, script, connect).as_bytes())?;
    write_data(out)?;
    for part in page_tail(script) {
        out.write_all(part)?;
    }
    Ok(())
}

/// The page up to the opening of its data element.
fn page_head(title: &str, script: &str, connect: &str) -> String {
    let policy = content_security_policy(script, VIEW_CSS, connect);
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
}

/// The page after its data: our script, and the end of the document.
fn page_tail(script: &str) -> [&[u8]; 3] {
    [
        b"</script>\n<script>",
        script.as_bytes(),
        b"</script>\n</body>\n</html>\n",
    ]
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
    fn lone_surrogates_reach_the_page_as_their_escapes() {
        // "<\ud83d" as JavaScript holds it: the carrier U+10F83D goes out as `\ud83d`.
        let value = serde_json::json!({"t": "<\u{10F83D}>😀"});
        let mut out = Vec::new();
        write_script_json(&value, &mut out).unwrap();
        let page = String::from_utf8(out).unwrap();
        assert!(
            page.contains("\\ud83d") && !page.contains('\u{10F83D}'),
            "{page}"
        );
        assert!(!page.contains('<') && page.contains('😀'), "{page}");
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
