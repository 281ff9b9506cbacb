//! Line framing: turns a byte stream into physical lines without holding the whole stream.
//!
//! The reader fills a bounded buffer, hands out chunks made only of complete lines (plus, at the
//! very end, an unterminated tail), and carries a partial line over to the next fill. A single
//! line longer than the buffer grows the buffer to fit that line (a line must be in memory to be
//! parsed at all); memory is therefore bounded by `max(buffer, longest line)`.

use std::io::{self, Read};
use std::ops::Range;

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One physical line inside a chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineSpan {
    /// 1-based line number in the file.
    pub number: u64,
    /// Byte range of the line's content within the chunk, without `\n` and without a final `\r`.
    pub content: Range<usize>,
    /// Whether the line ended with `\n` (only the very last line of a file can lack it).
    pub terminated: bool,
}

/// A run of complete lines read from the stream.
#[derive(Debug)]
pub(crate) struct Chunk<'a> {
    /// The chunk's bytes (line contents and their terminators).
    pub bytes: &'a [u8],
    /// File offset of `bytes[0]`.
    pub base_offset: u64,
    /// The lines, in order.
    pub lines: Vec<LineSpan>,
}

/// Streams chunks of whole lines from a reader.
#[derive(Debug)]
pub(crate) struct ChunkReader<R> {
    reader: R,
    buf: Vec<u8>,
    /// Bytes `buf[start..end]` are read but not yet handed out.
    start: usize,
    end: usize,
    /// File offset of `buf[0]`.
    buf_offset: u64,
    /// Number the next line will get.
    next_line: u64,
    eof: bool,
    at_file_start: bool,
    /// Whether the stream began with a UTF-8 BOM (known after the first chunk).
    pub had_bom: bool,
}

impl<R: Read> ChunkReader<R> {
    /// A reader with a buffer of `capacity` bytes (at least 64 KiB is sensible).
    pub fn new(reader: R, capacity: usize) -> Self {
        Self {
            reader,
            buf: vec![0; capacity.max(16)],
            start: 0,
            end: 0,
            buf_offset: 0,
            next_line: 1,
            eof: false,
            at_file_start: true,
            had_bom: false,
        }
    }

    /// The next chunk of whole lines, or `None` at the end of the stream.
    pub fn next_chunk(&mut self) -> io::Result<Option<Chunk<'_>>> {
        self.compact();
        loop {
            if let Some(end) = self.complete_lines_end() {
                return Ok(Some(self.take_chunk(end)));
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let end = self.end;
                return Ok(Some(self.take_chunk(end)));
            }
            if self.end == self.buf.len() {
                // One line fills the whole buffer: grow so that it fits.
                let grown = self.buf.len() * 2;
                self.buf.resize(grown, 0);
            }
            self.fill()?;
        }
    }

    /// Moves unconsumed bytes to the front of the buffer.
    fn compact(&mut self) {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.buf_offset += self.start as u64;
            self.end -= self.start;
            self.start = 0;
        }
    }

    /// Reads until the buffer is full or the stream ends.
    fn fill(&mut self) -> io::Result<()> {
        while self.end < self.buf.len() {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.at_file_start && (self.end >= BOM.len() || self.eof) {
            self.at_file_start = false;
            if self.buf[..self.end].starts_with(BOM) {
                self.had_bom = true;
                self.start = BOM.len();
            }
        }
        Ok(())
    }

    /// End (exclusive) of the last complete line in the unconsumed bytes, if the buffer is full
    /// enough to be worth handing out (or the stream has ended).
    fn complete_lines_end(&self) -> Option<usize> {
        if self.at_file_start || (!self.eof && self.end < self.buf.len()) {
            return None;
        }
        memchr::memrchr(b'\n', &self.buf[self.start..self.end]).map(|i| self.start + i + 1)
    }

    fn take_chunk(&mut self, end: usize) -> Chunk<'_> {
        let begin = self.start;
        let bytes = &self.buf[begin..end];
        let lines = split_lines(bytes, &mut self.next_line);
        self.start = end;
        Chunk {
            bytes,
            base_offset: self.buf_offset + begin as u64,
            lines,
        }
    }
}

/// Splits `bytes` into lines, numbering them from `*next_line`.
fn split_lines(bytes: &[u8], next_line: &mut u64) -> Vec<LineSpan> {
    let mut lines = Vec::new();
    let mut line_start = 0;
    for newline in memchr::memchr_iter(b'\n', bytes) {
        lines.push(line_span(bytes, line_start..newline, true, next_line));
        line_start = newline + 1;
    }
    if line_start < bytes.len() {
        lines.push(line_span(bytes, line_start..bytes.len(), false, next_line));
    }
    lines
}

fn line_span(
    bytes: &[u8],
    mut content: Range<usize>,
    terminated: bool,
    next_line: &mut u64,
) -> LineSpan {
    if content.end > content.start && bytes[content.end - 1] == b'\r' {
        content.end -= 1;
    }
    let number = *next_line;
    *next_line += 1;
    LineSpan {
        number,
        content,
        terminated,
    }
}

/// Whether a line holds only JSON whitespace (such lines are skipped silently).
pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (line number, offset, content, terminated) for every line, and whether a BOM was seen.
    type Lines = Vec<(u64, u64, Vec<u8>, bool)>;

    fn collect(input: &[u8], capacity: usize) -> (Lines, bool) {
        let mut reader = ChunkReader::new(input, capacity);
        let mut out = Vec::new();
        while let Some(chunk) = reader.next_chunk().unwrap() {
            for line in &chunk.lines {
                let offset = chunk.base_offset + line.content.start as u64;
                out.push((
                    line.number,
                    offset,
                    chunk.bytes[line.content.clone()].to_vec(),
                    line.terminated,
                ));
            }
        }
        (out, reader.had_bom)
    }

    #[test]
    fn lines_are_the_same_whatever_the_buffer_size() {
        let input = b"\xEF\xBB\xBF{\"a\":1}\r\n\n{\"bb\":22}\nlong line here without end";
        let (reference, bom) = collect(input, 1 << 20);
        assert!(bom);
        assert_eq!(reference.len(), 4);
        assert_eq!(reference[0], (1, 3, b"{\"a\":1}".to_vec(), true));
        assert_eq!(reference[1], (2, 12, b"".to_vec(), true));
        assert!(!reference[3].3);
        for capacity in [16, 17, 20, 31, 64] {
            assert_eq!(collect(input, capacity).0, reference, "capacity {capacity}");
        }
    }

    #[test]
    fn empty_and_bom_only_streams_have_no_lines() {
        assert!(collect(b"", 64).0.is_empty());
        let (lines, bom) = collect(BOM, 64);
        assert!(lines.is_empty());
        assert!(bom);
    }

    #[test]
    fn offsets_point_at_line_starts() {
        let input = b"ab\ncd\n\nef";
        let (lines, _) = collect(input, 16);
        for (_, offset, content, _) in &lines {
            let start = *offset as usize;
            assert_eq!(&input[start..start + content.len()], content.as_slice());
        }
    }
}
