//! Writing to stdout without panicking: a closed pipe (`pi-session cat F | head`) ends the
//! output quietly instead of aborting.

use std::io::{self, BufWriter, Write};

use pi_session::projection::projection::RhoItem;
use pi_session::types::json::{JsBuffer, JsonError, to_js_vec, write_laid_out, write_newline};

use crate::failure::Failure;

/// The bytes [`Out::for_answer`] gathers before it writes to stdout: std's default of 8 KiB
/// made a context's answer cost a `write(2)` every 3.5 KB (387 for the 1.36 MB `agent` answer
/// of the 5 MB bench file, each string longer than what was left of the buffer written on its
/// own).
const ANSWER_BUFFER_BYTES: usize = 128 << 10;

/// Buffered stdout whose write errors become a [`Failure`] (a closed pipe: exit 0, silently).
pub struct Out {
    inner: BufWriter<io::StdoutLock<'static>>,
}

impl Out {
    /// Locks stdout; what is written goes out 8 KiB at a time (std's buffer), so a command
    /// that reports as it goes (`check` and `grep` over a folder) shows its findings as they
    /// come.
    pub fn new() -> Self {
        Self {
            inner: BufWriter::new(io::stdout().lock()),
        }
    }

    /// Locks stdout for one answer written as fast as it is made (`context`): 128 KiB at a
    /// time ([`ANSWER_BUFFER_BYTES`]).
    pub fn for_answer() -> Self {
        Self {
            inner: BufWriter::with_capacity(ANSWER_BUFFER_BYTES, io::stdout().lock()),
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
        // Indented on the way out: no second copy of a large answer is held.
        write_laid_out(&compact, &mut self.inner, 0).map_err(write_failure)?;
        self.write(b"\n")
    }

    /// Writes compact JSON text (as `to_js_vec` writes it) laid out as `JSON.stringify(value,
    /// null, 2)` lays it out `depth` levels deep: also the rest of a value after a part
    /// written apart (e.g. `,"key":1}` after an array written with [`Self::array`] at
    /// `depth` 1).
    pub fn indented(&mut self, compact: &[u8], depth: usize) -> Result<(), Failure> {
        write_laid_out(compact, &mut self.inner, depth).map_err(write_failure)
    }

    /// Starts a JSON array written an element at a time, as `JSON.stringify(value, null, 2)`
    /// lays it out `depth` levels deep (0: the whole answer; 1: the value of a top-level
    /// key written with [`Self::text`]). Each element is serialised, written and dropped
    /// before the next is made, so a long answer is never held whole.
    pub fn array(&mut self, depth: usize) -> JsonArray<'_, BufWriter<io::StdoutLock<'static>>> {
        JsonArray::new(&mut self.inner, depth)
    }

    /// [`Self::array`] after `before` (e.g. `{"key": ` written as `JSON.stringify` lays it
    /// out), which is written with the first element or the close: an answer that fails
    /// before either writes nothing.
    pub fn array_after(
        &mut self,
        before: &'static str,
        depth: usize,
    ) -> JsonArray<'_, BufWriter<io::StdoutLock<'static>>> {
        let mut array = JsonArray::new(&mut self.inner, depth);
        array.before = before;
        array
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

/// A JSON array being written by [`Out::array`]: [`item`](Self::item) each element, then
/// [`finish`](Self::finish) (an array with no element is written `[]`).
pub struct JsonArray<'o, W: Write> {
    out: &'o mut W,
    depth: usize,
    len: usize,
    /// Written before the array opens ([`Out::array_after`]).
    before: &'static str,
    /// Where [`Self::item`] and [`Self::rho_item`] write each element's compact text: one
    /// buffer for the array's elements, not one grown from empty for each.
    scratch: JsBuffer,
}

impl<'o, W: Write> JsonArray<'o, W> {
    pub(crate) fn new(out: &'o mut W, depth: usize) -> Self {
        JsonArray {
            out,
            depth,
            len: 0,
            before: "",
            scratch: JsBuffer::default(),
        }
    }

    /// Writes the next element.
    pub fn item<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Failure> {
        self.item_printed(
            |scratch, depth| scratch.write_pretty(value, depth),
            |scratch| scratch.write(value),
        )
    }

    /// Writes the next element of a req_llm-based answer ([`RhoItem::write_compact`]: a JSON
    /// value printed as `value_to_js_vec` prints it, which scans its strings faster than the
    /// generic [`Self::item`]).
    pub fn rho_item(&mut self, item: &RhoItem) -> Result<(), Failure> {
        self.item_printed(
            |scratch, depth| item.write_pretty(scratch, depth),
            |scratch| item.write_compact(scratch),
        )
    }

    /// Writes the next element as `pretty` prints it laid out into the array's buffer (taken
    /// out of the array while the element is written), or, where it cannot
    /// ([`JsBuffer::write_pretty`]), as `compact` prints it, laid out on the way out.
    fn item_printed(
        &mut self,
        pretty: impl for<'b> FnOnce(&'b mut JsBuffer, usize) -> Result<Option<&'b [u8]>, JsonError>,
        compact: impl for<'b> FnOnce(&'b mut JsBuffer) -> Result<&'b [u8], JsonError>,
    ) -> Result<(), Failure> {
        let failed = |e: JsonError| Failure::new(format!("could not write JSON: {e}"));
        let mut scratch = std::mem::take(&mut self.scratch);
        let written = match pretty(&mut scratch, self.depth + 1) {
            Ok(Some(laid_out)) => self.item_laid_out(laid_out),
            Ok(None) => compact(&mut scratch)
                .map_err(failed)
                .and_then(|compact| self.item_text(compact)),
            Err(e) => Err(failed(e)),
        };
        self.scratch = scratch;
        written
    }

    /// Writes the next element from its compact JSON text (as `to_js_vec` writes it).
    pub fn item_text(&mut self, compact: &[u8]) -> Result<(), Failure> {
        self.item_text_parts(compact, &[])
    }

    /// [`Self::item_text`] of the compact text `text` followed by `rest` (the end of an
    /// object whose start `text` is: `SentMessage::written_parts`), neither copied.
    pub fn item_text_parts(&mut self, text: &[u8], rest: &[u8]) -> Result<(), Failure> {
        self.item_open()?;
        write_laid_out(text, self.out, self.depth + 1).map_err(write_failure)?;
        if !rest.is_empty() {
            // Inside the object `text` opened: one level deeper than the element.
            write_laid_out(rest, self.out, self.depth + 2).map_err(write_failure)?;
        }
        self.len += 1;
        Ok(())
    }

    /// Writes the next element from its text already laid out at the array's elements' depth
    /// ([`JsBuffer::write_pretty`]).
    fn item_laid_out(&mut self, laid_out: &[u8]) -> Result<(), Failure> {
        self.item_open()?;
        self.out.write_all(laid_out).map_err(write_failure)?;
        self.len += 1;
        Ok(())
    }

    /// What comes before an element: the array's opening (and what goes before it) or the
    /// comma after the element before, and the element's line.
    fn item_open(&mut self) -> Result<(), Failure> {
        if self.len == 0 {
            self.out
                .write_all(self.before.as_bytes())
                .map_err(write_failure)?;
        }
        let open = if self.len == 0 { b"[" } else { b"," };
        self.out.write_all(open).map_err(write_failure)?;
        write_newline(self.out, self.depth + 1).map_err(write_failure)
    }

    /// How deep the array sits in the answer (see [`Out::array`]).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Elements after the first of an array `depth` deep, written apart to `out` as
    /// [`Self::item`] writes them after another (then [`Self::items_written`] adds them to
    /// that array); not to be finished.
    pub fn continued(out: &'o mut W, depth: usize) -> Self {
        JsonArray {
            len: 1,
            ..Self::new(out, depth)
        }
    }

    /// Writes `count` elements written apart ([`Self::continued_in`]), after at least one
    /// element of this array.
    pub fn items_written(&mut self, written: &[u8], count: usize) -> Result<(), Failure> {
        debug_assert!(self.len > 0, "written after a first element only");
        self.out.write_all(written).map_err(write_failure)?;
        self.len += count;
        Ok(())
    }

    /// Closes the array.
    pub fn finish(self) -> Result<(), Failure> {
        if self.len == 0 {
            self.out
                .write_all(self.before.as_bytes())
                .map_err(write_failure)?;
            return self.out.write_all(b"[]").map_err(write_failure);
        }
        write_newline(self.out, self.depth).map_err(write_failure)?;
        self.out.write_all(b"]").map_err(write_failure)
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

/// [`write_laid_out`] into a new buffer.
#[cfg(test)]
fn indent_bytes(compact: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(compact.len() + compact.len() / 4);
    // Writing to a `Vec` cannot fail.
    let _ = write_laid_out(compact, &mut out, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::{JsonArray, indent};

    #[test]
    fn an_array_written_an_element_at_a_time_is_laid_out_as_a_whole() {
        let cases = [
            serde_json::json!([]),
            serde_json::json!([1]),
            serde_json::json!([{"a": [1, {}], "b": "x,[y]"}, [], "z", {"c": {"d": null}}]),
        ];
        for whole in cases {
            let items = whole.as_array().cloned().unwrap_or_default();
            for depth in [0, 1, 3] {
                let mut out = Vec::new();
                let mut array = JsonArray::new(&mut out, depth);
                for item in &items {
                    array.item(item).unwrap();
                }
                array.finish().unwrap();
                // At depth d the array sits as the value of a key d levels deep.
                let mut nested = whole.clone();
                for _ in 0..depth {
                    nested = serde_json::json!({ "k": nested });
                }
                let pretty = serde_json::to_string_pretty(&nested).unwrap();
                let mut expected = pretty.clone();
                if depth > 0 {
                    expected = pretty[pretty.rfind("\"k\": ").unwrap() + 5..].to_owned();
                    // Without the closing braces of the wrappers.
                    for level in 0..depth {
                        let close = format!("\n{}}}", "  ".repeat(level));
                        expected = expected.strip_suffix(&close).unwrap().to_owned();
                    }
                }
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    expected,
                    "{whole} at {depth}"
                );
            }
        }
    }

    #[test]
    fn indents_like_json_stringify() {
        // Deeper than the 63 levels of indentation written at once, escapes at a string's end.
        let deep = format!("{}{}", "[".repeat(70), "]".repeat(70));
        let deep_pretty = serde_json::to_string_pretty(
            &serde_json::from_str::<serde_json::Value>(&deep).unwrap(),
        )
        .unwrap();
        assert_eq!(indent(&deep), deep_pretty);
        let escaped = r#"{"a":{"b":[[],[{}],[1,"\\"]]},"c":"x\"y\\"}"#;
        let value: serde_json::Value = serde_json::from_str(escaped).unwrap();
        assert_eq!(
            indent(escaped),
            serde_json::to_string_pretty(&value).unwrap()
        );
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

    /// A string's end is found by the backslashes before a quote (an odd run escapes it),
    /// whatever runs of backslashes, quotes and structural characters the strings hold.
    #[test]
    fn strings_end_at_the_first_quote_not_escaped() {
        let pieces = [
            "\\", "\"", "\n", ",", "[", "{", ":", "]", "}", "a", "é", " ",
        ];
        let mut texts = Vec::new();
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    texts.push(format!("{a}{b}{c}"));
                }
            }
        }
        for (i, text) in texts.iter().enumerate() {
            let value = serde_json::json!({"t": text, "l": [text, {"k": text}], "n": i});
            let compact = serde_json::to_string(&value).unwrap();
            assert_eq!(
                indent(&compact),
                serde_json::to_string_pretty(&value).unwrap(),
                "{compact}"
            );
        }
    }
}
