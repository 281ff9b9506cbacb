//! Line framing: turns a byte stream into physical lines without holding the whole stream.
//!
//! The reader fills a buffer of bounded size, hands it out as a chunk made only of complete lines
//! (plus, at the very end, an unterminated tail), and carries the partial line over to the next
//! buffer. A single line longer than the buffer makes that chunk longer (a line must be in memory
//! to be parsed at all); memory per chunk is therefore `max(buffer, longest line)`.

use std::io::{self, Read};
use std::ops::{Deref, Range};
use std::sync::Arc;

/// A session's bytes held in memory, shared by the opened session and the chunks framed over
/// them: a `Vec` behind an `Arc`, so bytes read or handed over as a `Vec<u8>` are kept as they
/// are (an `Arc<[u8]>` would need them copied, or written with zeros before being read into).
pub type SharedBytes = Arc<Vec<u8>>;

/// The most lines one chunk holds (see [`split_lines`]).
const MAX_LINES_PER_CHUNK: usize = 16 << 10;

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

/// A run of complete lines read from the stream (plus, at the very end, an unterminated tail).
///
/// The chunk owns its bytes (or shares them, for input already in memory) so that it can be
/// parsed on another thread; after use, an owned buffer can be handed back to the reader
/// ([`Chunks::next_chunk`]'s `spare`) to be reused.
#[derive(Debug)]
pub(crate) struct Chunk {
    /// Position of this chunk in the stream (0, 1, 2, ...).
    pub seq: usize,
    /// The chunk's bytes (line contents and their terminators).
    pub bytes: ChunkBytes,
    /// File offset of `bytes[0]`.
    pub base_offset: u64,
    /// The lines, in order.
    pub lines: Vec<LineSpan>,
}

/// A chunk's bytes: a buffer the reader filled, or a range of input already in memory (framed
/// in place: a file held whole is not copied a second time into chunk buffers).
#[derive(Debug)]
pub(crate) enum ChunkBytes {
    /// Read into a buffer of its own (reusable as the next chunk's `spare`).
    Owned(Vec<u8>),
    /// `range` of bytes held in memory.
    Shared {
        /// All the input.
        all: SharedBytes,
        /// This chunk's part of it.
        range: Range<usize>,
    },
}

impl ChunkBytes {
    /// The buffer to reuse for a later chunk (an empty one for shared bytes).
    pub fn into_spare(self) -> Vec<u8> {
        match self {
            Self::Owned(buffer) => buffer,
            Self::Shared { .. } => Vec::new(),
        }
    }
}

impl Deref for ChunkBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Self::Owned(buffer) => buffer,
            Self::Shared { all, range } => all.get(range.clone()).unwrap_or_default(),
        }
    }
}

/// Where chunks come from: a stream ([`ChunkReader`]) or bytes in memory ([`SharedChunks`]).
/// Both frame the same lines, with the same numbers and offsets.
pub(crate) trait Chunks: Send {
    /// The next chunk of whole lines, or `None` at the end. `spare` is a buffer to reuse.
    fn next_chunk(&mut self, spare: Option<Vec<u8>>) -> io::Result<Option<Chunk>>;
    /// Whether the input began with a UTF-8 BOM (known after the first chunk).
    fn had_bom(&self) -> bool;
}

impl<R: Read + Send> Chunks for ChunkReader<R> {
    fn next_chunk(&mut self, spare: Option<Vec<u8>>) -> io::Result<Option<Chunk>> {
        ChunkReader::next_chunk(self, spare)
    }

    fn had_bom(&self) -> bool {
        self.had_bom
    }
}

/// Chunks of whole lines framed in place over bytes already in memory: the same lines as
/// [`ChunkReader`] gives for them (about `capacity` bytes a chunk, a longer line makes a longer
/// chunk, at most [`MAX_LINES_PER_CHUNK`] lines), without copying them.
#[derive(Debug)]
pub(crate) struct SharedChunks {
    bytes: SharedBytes,
    capacity: usize,
    /// Where the next chunk starts.
    at: usize,
    next_line: u64,
    next_seq: usize,
    had_bom: bool,
}

impl SharedChunks {
    /// Chunks over `bytes` (a leading BOM is skipped and remembered).
    pub fn new(bytes: SharedBytes, capacity: usize) -> Self {
        let had_bom = bytes.starts_with(BOM);
        Self {
            at: if had_bom { BOM.len() } else { 0 },
            bytes,
            capacity: capacity.max(16),
            next_line: 1,
            next_seq: 0,
            had_bom,
        }
    }
}

impl Chunks for SharedChunks {
    fn next_chunk(&mut self, _spare: Option<Vec<u8>>) -> io::Result<Option<Chunk>> {
        let rest = self.bytes.get(self.at..).unwrap_or_default();
        if rest.is_empty() {
            return Ok(None);
        }
        let window = if rest.len() <= self.capacity {
            rest.len()
        } else {
            // Up to the last newline within the capacity, else on to the first one after it.
            match memchr::memrchr(b'\n', &rest[..self.capacity]) {
                Some(newline) => newline + 1,
                None => memchr::memchr(b'\n', &rest[self.capacity..])
                    .map_or(rest.len(), |newline| self.capacity + newline + 1),
            }
        };
        let (lines, end) = split_lines(&rest[..window], &mut self.next_line);
        let chunk = Chunk {
            seq: self.next_seq,
            base_offset: self.at as u64,
            lines,
            bytes: ChunkBytes::Shared {
                all: Arc::clone(&self.bytes),
                range: self.at..self.at + end,
            },
        };
        self.at += end;
        self.next_seq += 1;
        Ok(Some(chunk))
    }

    fn had_bom(&self) -> bool {
        self.had_bom
    }
}

/// Streams chunks of whole lines from a reader through buffers of about `capacity` bytes.
#[derive(Debug)]
pub(crate) struct ChunkReader<R> {
    reader: R,
    capacity: usize,
    /// The partial line left over from the previous fill.
    carry: Vec<u8>,
    /// File offset of the next chunk's first byte.
    offset: u64,
    /// Number the next line will get.
    next_line: u64,
    next_seq: usize,
    eof: bool,
    at_file_start: bool,
    /// Whether the stream began with a UTF-8 BOM (known after the first chunk).
    pub had_bom: bool,
}

impl<R: Read> ChunkReader<R> {
    /// A reader handing out chunks of about `capacity` bytes (a longer line makes a longer chunk).
    pub fn new(reader: R, capacity: usize) -> Self {
        Self {
            reader,
            capacity: capacity.max(16),
            carry: Vec::new(),
            offset: 0,
            next_line: 1,
            next_seq: 0,
            eof: false,
            at_file_start: true,
            had_bom: false,
        }
    }

    /// The next chunk of whole lines, or `None` at the end of the stream. `spare` is a buffer
    /// to reuse (e.g. one from an earlier chunk).
    pub fn next_chunk(&mut self, spare: Option<Vec<u8>>) -> io::Result<Option<Chunk>> {
        let mut buf = spare.unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(&self.carry);
        self.carry.clear();
        let mut want = self.capacity;
        loop {
            if !self.eof && buf.len() < want {
                // Room for the whole read at once: `read_to_end` would grow an empty pool
                // buffer by doubling (a copy each time).
                buf.reserve(want - buf.len());
                let missing = (want - buf.len()) as u64;
                let read = (&mut self.reader).take(missing).read_to_end(&mut buf)?;
                self.eof = (read as u64) < missing;
            }
            self.skip_bom(&mut buf);
            if let Some(last_newline) = memchr::memrchr(b'\n', &buf) {
                self.carry.extend_from_slice(&buf[last_newline + 1..]);
                buf.truncate(last_newline + 1);
                break;
            }
            if self.eof {
                break;
            }
            // One line is longer than the buffer: read on until its newline.
            want = buf.len() * 2;
        }
        if buf.is_empty() {
            return Ok(None);
        }
        let (lines, framed) = split_lines(&buf, &mut self.next_line);
        self.carry_from(&mut buf, framed);
        let chunk = Chunk {
            seq: self.next_seq,
            base_offset: self.offset,
            lines,
            bytes: ChunkBytes::Owned(buf),
        };
        self.offset += chunk.bytes.len() as u64;
        self.next_seq += 1;
        Ok(Some(chunk))
    }

    /// Ends the chunk at `framed` (where [`split_lines`] stopped after [`MAX_LINES_PER_CHUNK`]
    /// lines), carrying the rest over (in front of what is already carried): per-line
    /// bookkeeping of a chunk of tiny lines (a file of a million `{}`) stays as small as a
    /// chunk of ordinary ones.
    fn carry_from(&mut self, buf: &mut Vec<u8>, framed: usize) {
        if framed < buf.len() {
            let mut carry = buf.split_off(framed);
            carry.extend_from_slice(&self.carry);
            self.carry = carry;
        }
    }

    /// Drops a UTF-8 BOM at the very start of the stream (its bytes still count in offsets).
    fn skip_bom(&mut self, buf: &mut Vec<u8>) {
        if self.at_file_start && (buf.len() >= BOM.len() || self.eof) {
            self.at_file_start = false;
            if buf.starts_with(BOM) {
                self.had_bom = true;
                buf.drain(..BOM.len());
                self.offset += BOM.len() as u64;
            }
        }
    }
}

/// One part of a file read by position ([`read_segment`]): the lines that *start* in
/// `[index × len, (index + 1) × len)`, the last one read on to its newline, framed in chunks of
/// at most [`MAX_LINES_PER_CHUNK`] lines over the one buffer they were read into.
///
/// Line numbers count from 0 within each chunk: only the fold, which sees every part in order,
/// knows where the file's line numbers stand, and adds that.
#[derive(Debug)]
pub(crate) struct Segment {
    /// The buffer read into (handed back to the pool once the chunks are folded).
    pub buffer: SharedBytes,
    /// The lines, in order (none when no line starts in the part).
    pub chunks: Vec<Chunk>,
    /// File offset of the first line's start (meaningless when there is no chunk).
    pub start: u64,
    /// File offset after the last line (meaningless when there is no chunk).
    pub end: u64,
    /// Whether the file ended inside (or before) the part as it was read: no later part counts.
    pub at_eof: bool,
    /// Whether the file begins with a UTF-8 BOM (only part 0 can say; its bytes are skipped).
    pub had_bom: bool,
}

impl Segment {
    /// The buffer to reuse for a later part (an empty one if a chunk still shares it).
    pub fn into_spare(self) -> Vec<u8> {
        drop(self.chunks);
        Arc::try_unwrap(self.buffer).unwrap_or_default()
    }
}

/// The first read past a part's end for the rest of its last line; each further read doubles.
const FIRST_CONTINUATION: usize = 16 << 10;

/// Reads part `index` of a file split in parts of `len` bytes through `read_at` (fills what it
/// is given from a file offset, as `FileExt::read_at`; fewer bytes only at the end of the file)
/// into `buffer` and frames its lines ([`Segment`]).
///
/// A line belongs to the part where it starts: the part reads one byte before its start (a
/// line starts after a newline) and its last line on past its end, up to a newline or the end
/// of the file. So the parts of a file that does not change while it is read frame exactly the
/// lines [`ChunkReader`] frames, in order, each part's first line starting where the one
/// before ended. The buffer grows to the part plus its last line (`max(len, longest line)`,
/// as a chunk does) and is not written with zeros again when reused.
pub(crate) fn read_segment(
    mut read_at: impl FnMut(&mut [u8], u64) -> io::Result<usize>,
    index: usize,
    len: usize,
    mut buffer: Vec<u8>,
) -> io::Result<Segment> {
    let len = len.max(16);
    let part_start = (index as u64).saturating_mul(len as u64);
    // One byte before the part: whether a line starts at its first byte.
    let read_from = part_start.saturating_sub(1);
    let want = if index == 0 { len } else { len + 1 };
    // The bytes land from `lead` on, where they sit in a cache line as they sit in the
    // kernel's page ([`aligned_lead`]).
    let room = want + CACHE_LINE;
    if buffer.len() < room {
        // Room for any part (part 0 reads one byte less) and the first read past its end:
        // growing a full buffer would copy it into fresh pages.
        buffer.reserve_exact(room + FIRST_CONTINUATION - buffer.len());
        buffer.resize(room, 0);
    }
    let lead = aligned_lead(&buffer, read_from);
    let mut filled = lead
        + read_into(&mut buffer[lead..lead + want], |rest, before| {
            read_at(rest, read_from + before as u64)
        })?;
    let mut at_eof = filled < lead + want;
    let mut had_bom = false;
    let first = if index == 0 {
        had_bom = buffer[lead..filled].starts_with(BOM);
        Some(lead + if had_bom { BOM.len() } else { 0 })
    } else {
        memchr::memchr(b'\n', &buffer[lead..filled]).map(|newline| lead + newline + 1)
    };
    // The first line must start inside the part and before the end of the file (`filled` is
    // at most the part: a line starting after it is the next part's).
    let first = first.filter(|&first| first < filled);
    // File offset of the byte at `at` in the buffer.
    let offset = |at: usize| read_from + (at - lead) as u64;
    let Some(first) = first else {
        return Ok(Segment {
            buffer: Arc::new(buffer),
            chunks: Vec::new(),
            start: part_start,
            end: part_start,
            at_eof,
            had_bom,
        });
    };
    // The last line: read on to its newline unless the part ends with one.
    let end = if at_eof || buffer[filled - 1] == b'\n' {
        filled
    } else {
        let mut more = FIRST_CONTINUATION;
        loop {
            if buffer.len() < filled + more {
                buffer.reserve_exact(filled + more - buffer.len());
                buffer.resize(filled + more, 0);
            }
            let read = read_into(&mut buffer[filled..filled + more], |rest, before| {
                read_at(rest, offset(filled + before))
            })?;
            let newline = memchr::memchr(b'\n', &buffer[filled..filled + read]);
            filled += read;
            if let Some(newline) = newline {
                break filled - read + newline + 1;
            }
            if read < more {
                at_eof = true;
                break filled;
            }
            more = more.saturating_mul(2);
        }
    };
    let buffer = Arc::new(buffer);
    let mut chunks = Vec::new();
    let mut at = first;
    while at < end {
        let (lines, framed) = split_lines(&buffer[at..end], &mut 0);
        let cut = at + framed;
        chunks.push(Chunk {
            seq: index,
            base_offset: offset(at),
            lines,
            bytes: ChunkBytes::Shared {
                all: Arc::clone(&buffer),
                range: at..cut,
            },
        });
        at = cut;
    }
    Ok(Segment {
        start: offset(first),
        end: offset(end),
        buffer,
        chunks,
        at_eof,
        had_bom,
    })
}

/// The bytes of a cache line: what [`aligned_lead`] aligns to.
pub(crate) const CACHE_LINE: usize = 64;

/// Where in `buffer` (less than [`CACHE_LINE`] bytes in) to read bytes from file offset
/// `at`, so that each lands at the same place in a cache line as it sits in the kernel's
/// page cache (whose pages are aligned). The kernel's copy into a buffer at another place in
/// the line is much slower: reading the 200 MB bench session in 256 KiB reads took 140 ms of
/// system time into a buffer one or 16 bytes off, 35-44 ms into one at the same place
/// (docs/perf.md, round 17). A caller leaves [`CACHE_LINE`] bytes of room before what it
/// reads.
pub(crate) fn aligned_lead(buffer: &[u8], at: u64) -> usize {
    let address = buffer.as_ptr().addr() % CACHE_LINE;
    let wanted = (at % CACHE_LINE as u64) as usize;
    (CACHE_LINE + wanted - address) % CACHE_LINE
}

/// Fills `buffer` from `read` (called with what is left to fill and how much is filled before
/// it) until it is full or `read` says the end came; how many bytes were filled.
pub(crate) fn read_into(
    buffer: &mut [u8],
    mut read: impl FnMut(&mut [u8], usize) -> io::Result<usize>,
) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match read(&mut buffer[filled..], filled) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}

/// Splits the start of `bytes` into lines, numbering them from `*next_line`: every line, the
/// unterminated tail too, unless [`MAX_LINES_PER_CHUNK`] lines end before the end of `bytes`,
/// where it stops. Returns the lines and how many bytes they take (where a chunk of them ends).
/// One search for the newlines frames the lines and finds where the chunk is cut.
fn split_lines(bytes: &[u8], next_line: &mut u64) -> (Vec<LineSpan>, usize) {
    let mut lines = Vec::new();
    let mut line_start = 0;
    for newline in memchr::memchr_iter(b'\n', bytes) {
        lines.push(line_span(bytes, line_start..newline, true, next_line));
        line_start = newline + 1;
        if lines.len() == MAX_LINES_PER_CHUNK {
            return (lines, line_start);
        }
    }
    if line_start < bytes.len() {
        lines.push(line_span(bytes, line_start..bytes.len(), false, next_line));
    }
    (lines, bytes.len())
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

    /// Every line through [`ChunkReader`], checked equal to what [`SharedChunks`] frames in
    /// place.
    fn collect(input: &[u8], capacity: usize) -> (Lines, bool) {
        let streamed = lines_of(ChunkReader::new(input, capacity));
        let shared = lines_of(SharedChunks::new(Arc::new(input.to_vec()), capacity));
        assert_eq!(shared, streamed, "framed in place");
        streamed
    }

    fn lines_of(mut chunks: impl Chunks) -> (Lines, bool) {
        let mut out = Vec::new();
        let mut spare = None;
        let mut expected_seq = 0;
        while let Some(chunk) = chunks.next_chunk(spare.take()).unwrap() {
            assert_eq!(chunk.seq, expected_seq);
            assert!(chunk.lines.len() <= MAX_LINES_PER_CHUNK);
            expected_seq += 1;
            for line in &chunk.lines {
                let offset = chunk.base_offset + line.content.start as u64;
                out.push((
                    line.number,
                    offset,
                    chunk.bytes[line.content.clone()].to_vec(),
                    line.terminated,
                ));
            }
            spare = Some(chunk.bytes.into_spare());
        }
        (out, chunks.had_bom())
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
    fn a_chunk_holds_at_most_max_lines_and_the_rest_follows_in_order() {
        let mut input = Vec::new();
        for i in 0..MAX_LINES_PER_CHUNK * 2 + 5 {
            input.extend_from_slice(format!("{{}}{}\n", i % 10).as_bytes());
        }
        input.extend_from_slice(b"tail");
        let mut reader = ChunkReader::new(&input[..], 1 << 20);
        let mut sizes = Vec::new();
        while let Some(chunk) = reader.next_chunk(None).unwrap() {
            sizes.push(chunk.lines.len());
        }
        assert_eq!(
            sizes,
            [MAX_LINES_PER_CHUNK, MAX_LINES_PER_CHUNK, 5, 1],
            "then 5 lines, then the unterminated tail"
        );
        let mut shared = SharedChunks::new(Arc::new(input.to_vec()), 1 << 20);
        let mut sizes = Vec::new();
        while let Some(chunk) = Chunks::next_chunk(&mut shared, None).unwrap() {
            sizes.push(chunk.lines.len());
        }
        assert_eq!(
            sizes,
            [MAX_LINES_PER_CHUNK, MAX_LINES_PER_CHUNK, 6],
            "in place, the unterminated tail ends the last chunk"
        );
        let (lines, _) = collect(&input, 1 << 20);
        assert_eq!(lines.len(), MAX_LINES_PER_CHUNK * 2 + 6);
        for (i, (number, offset, content, _)) in lines.iter().enumerate() {
            assert_eq!(*number, i as u64 + 1);
            let start = *offset as usize;
            assert_eq!(&input[start..start + content.len()], content.as_slice());
        }
    }

    /// Every line of `input` read part by part ([`read_segment`] with parts of `len` bytes),
    /// numbered as the fold numbers them, up to the first part that met the end.
    fn lines_by_parts(input: &[u8], len: usize) -> (Lines, bool) {
        let read_at = |into: &mut [u8], at: u64| -> io::Result<usize> {
            let rest = input.get(at as usize..).unwrap_or_default();
            let n = rest.len().min(into.len());
            into[..n].copy_from_slice(&rest[..n]);
            Ok(n)
        };
        let mut out = Vec::new();
        let mut had_bom = false;
        let mut next_line = 1;
        let mut next_start = 0;
        let mut spare = Vec::new();
        for index in 0.. {
            let segment = read_segment(read_at, index, len, spare).unwrap();
            if index == 0 {
                had_bom = segment.had_bom;
            } else if !segment.chunks.is_empty() {
                assert_eq!(
                    segment.start, next_start,
                    "part {index} starts where the last ended"
                );
            }
            for chunk in &segment.chunks {
                assert!(chunk.lines.len() <= MAX_LINES_PER_CHUNK);
                for line in &chunk.lines {
                    let offset = chunk.base_offset + line.content.start as u64;
                    out.push((
                        line.number + next_line,
                        offset,
                        chunk.bytes[line.content.clone()].to_vec(),
                        line.terminated,
                    ));
                }
                next_line += chunk.lines.len() as u64;
            }
            if !segment.chunks.is_empty() {
                next_start = segment.end;
            }
            let at_eof = segment.at_eof;
            spare = segment.into_spare();
            if at_eof {
                break;
            }
        }
        (out, had_bom)
    }

    #[test]
    fn parts_read_by_position_frame_the_lines_the_stream_frames() {
        // Pseudo-random lines: empty ones, `\r\n`, lines longer than a part (read on past
        // it), with and without a BOM and a final newline.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        for case in 0..300 {
            let mut input = Vec::new();
            if case % 5 == 0 {
                input.extend_from_slice(BOM);
            }
            for _ in 0..next(40) {
                let len = match next(10) {
                    0 => 0,
                    1 => 40 + next(200),
                    _ => next(30),
                };
                input.extend((0..len).map(|_| b"ab{}\"x\r"[next(7) as usize]));
                input.extend_from_slice(if next(4) == 0 { b"\r\n" } else { b"\n" });
            }
            if case % 3 == 0 {
                input.extend_from_slice(b"tail");
            }
            let streamed = lines_of(ChunkReader::new(&input[..], 1 << 20));
            for len in [16, 17, 23, 64, 1 << 20] {
                assert_eq!(
                    lines_by_parts(&input, len),
                    streamed,
                    "case {case}, parts of {len}"
                );
            }
        }
    }

    #[test]
    fn parts_of_tiny_lines_are_cut_at_max_lines() {
        let input = b"{}\n".repeat(MAX_LINES_PER_CHUNK + 3);
        let streamed = lines_of(ChunkReader::new(&input[..], 1 << 20));
        assert_eq!(lines_by_parts(&input, 1 << 20), streamed);
        assert_eq!(lines_by_parts(&input, 3 << 10), streamed);
    }

    #[test]
    fn a_file_ending_at_a_part_boundary_or_empty_ends_there() {
        for input in [
            &b""[..],
            b"0123456789abcde\n",
            b"0123456789abcdef",
            BOM,
            b"\n",
        ] {
            let streamed = lines_of(ChunkReader::new(input, 1 << 20));
            assert_eq!(lines_by_parts(input, 16), streamed, "{input:?}");
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
