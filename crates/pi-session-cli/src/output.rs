//! Writing to stdout without panicking: a closed pipe (`pi-session cat F | head`) ends the
//! output quietly instead of aborting.

use std::io::{self, BufWriter, Write};

use pi_session::types::to_js_string;

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

    /// Writes a JSON value as `JSON.stringify(value, null, 2)` would, and a newline.
    pub fn json(&mut self, value: &serde_json::Value) -> Result<(), Failure> {
        let compact =
            to_js_string(value).map_err(|e| Failure::new(format!("could not write JSON: {e}")))?;
        self.line(&indent(&compact))
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

/// Re-indents compact JSON the way `JSON.stringify(value, null, 2)` lays it out: two spaces per
/// level, `": "` after keys, and empty objects and arrays kept as `{}` and `[]`.
///
/// The input must be compact JSON (no whitespace outside strings), as the JS writer makes it.
pub fn indent(compact: &str) -> String {
    let mut out = String::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = compact.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', depth * 2));
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                if chars.peek() == Some(&close) {
                    out.push(close);
                    chars.next();
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
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
