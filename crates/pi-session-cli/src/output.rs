//! Writing to stdout without panicking: a closed pipe (`pi-session cat F | head`) ends the
//! output quietly instead of aborting.

use std::io::{self, BufWriter, Write};

use pi_session::types::json::to_js_vec;

use crate::failure::Failure;

/// Buffered stdout whose write errors become a [`Failure`] (a closed pipe: exit 0, silently).
pub struct Out {
    inner: BufWriter<io::StdoutLock<'static>>,
}

impl Out {
    /// Locks stdout.
    pub fn new() -> Self {
        Self {
            inner: BufWriter::new(io::stdout().lock()),
        }
    }

    /// Writes `text` and a newline.
    pub fn line(&mut self, text: &str) -> Result<(), Failure> {
        self.write(text.as_bytes())?;
        self.write(b"\n")
    }

    /// Writes `text` as is.
    pub fn text(&mut self, text: &str) -> Result<(), Failure> {
        self.write(text.as_bytes())
    }

    /// Writes a JSON value as `JSON.stringify(value, null, 2)` would, and a newline. The
    /// value is serialised straight from `value` (no intermediate JSON tree).
    pub fn json<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Failure> {
        let compact =
            to_js_vec(value).map_err(|e| Failure::new(format!("could not write JSON: {e}")))?;
        let indented = indent_bytes(&compact);
        drop(compact);
        self.write(&indented)?;
        self.write(b"\n")
    }

    /// Writes raw bytes (an HTML page).
    pub fn bytes(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        self.write(bytes)
    }

    /// Pushes buffered output to stdout.
    pub fn flush(&mut self) -> Result<(), Failure> {
        self.inner.flush().map_err(write_failure)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        self.inner.write_all(bytes).map_err(write_failure)
    }
}

fn write_failure(error: io::Error) -> Failure {
    if error.kind() == io::ErrorKind::BrokenPipe {
        Failure {
            code: 0,
            message: String::new(),
        }
    } else {
        Failure::new(format!("could not write to stdout: {error}"))
    }
}

/// Writes one line to stderr, ignoring errors (there is nowhere left to report them).
pub fn warn(text: &str) {
    let _ = writeln!(io::stderr().lock(), "{text}");
}

/// `JSON.stringify(value, null, 2)`'s layout of compact JSON text (as `to_js_string` writes
/// it).
#[cfg(test)]
fn indent(compact: &str) -> String {
    String::from_utf8_lossy(&indent_bytes(compact.as_bytes())).into_owned()
}

/// [`indent`] over bytes: structural characters are ASCII, so string contents (UTF-8 or not)
/// are copied through in runs up to the next quote or backslash.
fn indent_bytes(compact: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(compact.len() + compact.len() / 4);
    let mut depth = 0usize;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.resize(out.len() + depth * 2, b' ');
    };
    let mut at = 0;
    while at < compact.len() {
        let c = compact[at];
        at += 1;
        match c {
            b'"' => {
                out.push(c);
                // Copy the string through its closing quote, skipping escaped characters.
                while at < compact.len() {
                    let run = compact[at..]
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\')
                        .map_or(compact.len(), |n| at + n);
                    out.extend_from_slice(&compact[at..run]);
                    at = run;
                    match compact.get(at) {
                        Some(b'"') => {
                            out.push(b'"');
                            at += 1;
                            break;
                        }
                        Some(_) => {
                            let end = (at + 2).min(compact.len());
                            out.extend_from_slice(&compact[at..end]);
                            at = end;
                        }
                        None => {}
                    }
                }
            }
            b'{' | b'[' => {
                out.push(c);
                let close = if c == b'{' { b'}' } else { b']' };
                if compact.get(at) == Some(&close) {
                    out.push(close);
                    at += 1;
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            b',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::indent;

    #[test]
    fn indents_like_json_stringify() {
        let cases = [
            ("{}", "{}"),
            ("[]", "[]"),
            (
                r#"{"a":[],"b":{},"c":[1,{"d":"x,{y}:\\\"z"}]}"#,
                "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": \"x,{y}:\\\\\\\"z\"\n    }\n  ]\n}",
            ),
        ];
        for (compact, pretty) in cases {
            assert_eq!(indent(compact), pretty);
            let value: serde_json::Value = serde_json::from_str(compact).unwrap();
            assert_eq!(
                indent(compact),
                serde_json::to_string_pretty(&value).unwrap()
            );
        }
    }
}
