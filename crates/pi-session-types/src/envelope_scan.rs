//! One pass over a line: JSON grammar, UTF-8 and the envelope, or "not sure".
//!
//! The store's open reads every line's envelope ([`crate::parse_envelope_ref`]: serde_json,
//! the rest skipped) and then scans the line again for what that parse does not look at
//! (invalid UTF-8 in skipped strings, a `\ud`/`\uD` escape, a byte 0xF4: the lines whose full
//! parse may warn). [`scan_envelope`] does all of it in one scan of the bytes and answers only
//! when it is sure the answer is the one that path gives without any warning; everything
//! unusual gives `None`, and the caller takes that path unchanged, so its errors, repairs and
//! warnings stay its own.
//!
//! It accepts exactly what serde_json accepts (RFC 8259: the whitespace `' '`, `\t`, `\n`, `\r`;
//! strings without raw control characters and with only the escapes `\" \\ \/ \b \f \n \r \t
//! \uXXXX`; numbers `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` of any size, as the skipped
//! values are never converted; `true`, `false`, `null`; nothing after the value but
//! whitespace), and it is sure only when also:
//! - the line is an object, and every byte is UTF-8 (no overlong form, no surrogate, nothing
//!   past U+10FFFF);
//! - it has no byte 0xF4 (the lead byte of U+100000..U+10FFFF, where the lone-surrogate
//!   carriers live) and no bytes `\u` followed by `d` or `D` anywhere (a surrogate escape, or
//!   an escaped backslash followed by `ud`: the store's check reads the bytes, not the tokens);
//! - its top-level keys hold no escape, its `type` is a string, `id`, `parentId` and
//!   `timestamp` are strings or `null`, none of the four is given twice and none of their
//!   strings holds an escape (so each borrows from the line, as serde's parse borrows it);
//! - it nests at most [`MAX_DEPTH`] arrays and objects deep.
//!
//! Strings are most of a session's bytes (tool results, texts): they are scanned 16 or 32
//! bytes at a time, a run skipped whole when the only bytes in it a string ends or changes at
//! (`"`, `\`, a control character, a byte that is not ASCII) are the escapes text is full of
//! (`\n`, `\t`, `\"`) (`only_escapes`: bit masks of the quotes, backslashes, escape letters
//! and other stops, checked with shifts: no branch per escape); elsewhere the scan goes to the
//! next such byte (`stops`) and reads it alone, decoding UTF-8 only where a byte is not ASCII.
//! Most strings (keys, ids, short values) end at the first stop of their first 16 bytes: that
//! is tried first. The masks come from SSE2 byte compares and `pmovmskb` (baseline on x86_64)
//! through `safe_arch`'s safe wrappers of `core::arch`; other targets fold the bytes into the
//! same masks.
//!
//! The scan also folds every key of the line, at any depth, into a [`KeyFilter`] (a 64-bit
//! Bloom filter, two bits a key), so a reader that wants the lines holding a key can leave
//! most others unread without reading them again; and it tells whether the line is spelled
//! as `JSON.stringify` spells its strings and layout ([`Scanned::stringify_spelled`]), so a
//! reader that checks a part of the line for that spelling (to copy it) can step over its
//! strings by their quotes ([`crate::json::Strings`]).

use crate::line::EnvelopeRef;
use std::borrow::Cow;

/// The deepest nesting of arrays and objects (the line's own object counts as 1) the scan is
/// sure about; serde_json's recursion limit is 128.
pub const MAX_DEPTH: u32 = 127;

/// Which keys a JSON line may hold: a Bloom filter of 64 bits, two set for each key the line
/// holds at any depth (chosen by a hash of the key's length and its first, second and last
/// bytes as written). A key written with an escape (any `\` in it) or with a byte that is
/// not ASCII sets every bit, since an escape can spell any key; so does a line nobody scanned
/// ([`KeyFilter::ANY`]).
///
/// [`may_hold`](Self::may_hold) is `false` only when the line surely holds no such key; about
/// one absent key in five reads as "maybe" in a line of twenty keys.
///
/// ```
/// use pi_session_types::envelope_scan::{KeyFilter, scan_envelope};
/// let line = br#"{"type":"message","id":"a","message":{"role":"user","attachments":[{"name":"f"}]}}"#;
/// let keys = scan_envelope(line).unwrap().keys;
/// assert!(keys.may_hold("attachments") && keys.may_hold("name") && keys.may_hold("type"));
/// assert!(KeyFilter::ANY.may_hold("anything"));
/// let escaped = scan_envelope(br#"{"type":"message","message":{"\u0061":1}}"#).unwrap().keys;
/// assert_eq!(escaped, KeyFilter::ANY);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyFilter(u64);

impl KeyFilter {
    /// May hold any key: what a line not scanned (or holding an escaped key) gets.
    pub const ANY: Self = Self(u64::MAX);

    /// Holds no key at all: the start of a fold.
    pub const NONE: Self = Self(0);

    /// The filter of one key, given as written between its quotes.
    #[inline(always)]
    fn of_written(key: &[u8]) -> u64 {
        let byte = |at: usize| key.get(at).copied().map_or(0, u64::from);
        let last = key.last().copied().map_or(0, u64::from);
        let mixed = (key.len() as u64 | byte(0) << 8 | last << 16 | byte(1) << 24)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        1 << (mixed >> 58) | 1 << ((mixed >> 52) & 63)
    }

    /// The bits of a key the scan read: its own when it is `plain` (no escape, every byte
    /// ASCII), else every bit.
    #[inline]
    fn of_scanned(key: &[u8], plain: bool) -> u64 {
        if plain {
            Self::of_written(key)
        } else {
            u64::MAX
        }
    }

    /// The filter of one key as written between its quotes in a line (escapes not decoded):
    /// its two bits, or every bit when it holds a `\` or a byte that is not ASCII.
    #[inline]
    pub fn of_key(written: &[u8]) -> Self {
        if written
            .iter()
            .any(|&byte| byte == b'\\' || !byte.is_ascii())
        {
            Self::ANY
        } else {
            Self(Self::of_written(written))
        }
    }

    /// This filter and `other`'s keys: a line holding the keys of both.
    #[must_use]
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether a line with this filter may hold the key `key` (decoded, as a JSON object
    /// has it) at some depth: `false` only when it surely does not. A key that must be
    /// written with an escape (a `"`, a `\`, a control character) is found in the
    /// every-bit filter of the line that writes it so.
    pub fn may_hold(self, key: &str) -> bool {
        self.may_hold_all(Self::wanting(key))
    }

    /// The filter a question about `key` (decoded) looks for, worked out once for a question
    /// asked of many lines ([`Self::may_hold_all`]); the [`union`](Self::union) of several asks
    /// about all of them at once.
    ///
    /// ```
    /// use pi_session_types::envelope_scan::KeyFilter;
    /// let line = KeyFilter::of_key(b"model").union(KeyFilter::of_key(b"provider"));
    /// let both = KeyFilter::wanting("model").union(KeyFilter::wanting("provider"));
    /// assert!(line.may_hold_all(both));
    /// assert!(!KeyFilter::of_key(b"model").may_hold_all(both));
    /// assert_eq!(line.may_hold_all(KeyFilter::wanting("model")), line.may_hold("model"));
    /// ```
    #[inline]
    pub fn wanting(key: &str) -> Self {
        Self(Self::of_written(key.as_bytes()))
    }

    /// Whether a line with this filter may hold every key `keys` asks about (a
    /// [`wanting`](Self::wanting) filter, or a union of them): [`may_hold`](Self::may_hold)
    /// of each, in one comparison.
    #[inline]
    pub fn may_hold_all(self, keys: Self) -> bool {
        self.0 & keys.0 == keys.0
    }

    /// The filter's 64 bits (for storing it).
    pub fn bits(self) -> u64 {
        self.0
    }

    /// A filter from [`bits`](Self::bits) stored earlier.
    pub fn from_bits(bits: u64) -> Self {
        Self(bits)
    }
}

/// What one scan of a line proved: its envelope and the keys it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned<'a> {
    /// The envelope, as [`crate::parse_envelope_ref`] reads it.
    pub envelope: EnvelopeRef<'a>,
    /// Every key of the line, at every depth (the top level's too).
    pub keys: KeyFilter,
    /// Whether every string of the line is spelled as `JSON.stringify` spells it and nothing
    /// lies between the line's tokens: the scan met no whitespace outside strings and no
    /// escape but `\"`, `\\`, `\b`, `\f`, `\n`, `\r` and `\t` (no `\/`, no `\u`). What
    /// else a sure scan proves (valid UTF-8, no raw control character, no carrier of a lone
    /// surrogate) makes each string then exactly `JSON.stringify`'s spelling of what it
    /// reads as; numbers and keys (their order, a key given twice) are not judged.
    pub stringify_spelled: bool,
    /// Where the value of the line's top-level `message` starts and where its `id`'s text
    /// does, when the line holds one `message` (two: `JSON.parse` keeps the last) and an `id`
    /// string, each within its first 64 KiB. A reader of the message finds it without reading
    /// the members before it, once a look at the line's first bytes and its id tells that it
    /// is laid out as pi and omp write a `message` entry and still the line scanned
    /// ([`MessageAt::holds`]).
    pub message_at: Option<MessageAt>,
}

/// Where [`scan_envelope`] found a `message` line's message and id ([`Scanned::message_at`]):
/// two offsets below 64 KiB, packed in 32 bits (the store keeps them so, beside each entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageAt(std::num::NonZeroU32);

impl MessageAt {
    /// How a line laid out as [`Scanned::message_at`] wants it starts.
    const HEAD: &'static [u8] = br#"{"type":"message","#;

    /// The message's value at `message` (its `{`), the `id`'s text at `id` (past its opening
    /// quote); `None` when either is 64 KiB or more into the line, or `message` is 0.
    ///
    /// ```
    /// use pi_session_types::envelope_scan::MessageAt;
    /// let at = MessageAt::new(90, 24).unwrap();
    /// assert_eq!((at.message(), at.id()), (90, 24));
    /// assert_eq!(MessageAt::from_packed(at.to_packed()), Some(at));
    /// assert_eq!(MessageAt::from_packed(0), None);
    /// assert_eq!(MessageAt::new(1 << 16, 24), None);
    /// ```
    pub fn new(message: usize, id: usize) -> Option<Self> {
        let message = u16::try_from(message).ok()?;
        let id = u16::try_from(id).ok()?;
        std::num::NonZeroU32::new(u32::from(id) << 16 | u32::from(message)).map(Self)
    }

    /// The offset of the message's value.
    pub fn message(self) -> usize {
        (self.0.get() & 0xffff) as usize
    }

    /// The offset of the `id`'s text.
    pub fn id(self) -> usize {
        (self.0.get() >> 16) as usize
    }

    /// The 32 bits the store keeps.
    pub fn to_packed(self) -> u32 {
        self.0.get()
    }

    /// What [`Self::to_packed`] gave (`None` for 0).
    pub fn from_packed(packed: u32) -> Option<Self> {
        std::num::NonZeroU32::new(packed).map(Self)
    }

    /// Whether `line` still reads as the scanned one: it starts with `{"type":"message",`,
    /// holds `"id":"` `id` `"` where the scan found the id, and `"message":` right before where
    /// it found the message (a line rewritten in place under another id, or with its members
    /// moved, or laid out otherwise, says no).
    ///
    /// ```
    /// use pi_session_types::envelope_scan::scan_envelope;
    /// let line = br#"{"type":"message","id":"a1","parentId":null,"message":{"role":"user"}}"#;
    /// let at = scan_envelope(line).unwrap().message_at.unwrap();
    /// assert!(at.holds(line, "a1"));
    /// assert!(!at.holds(br#"{"type":"message","id":"b1","parentId":null,"message":{"role":"user"}}"#, "a1"));
    /// // The same id, the message moved: what the scan found there is no longer the message.
    /// assert!(!at.holds(br#"{"type":"message","id":"a1","message":{"role":"user"},"parentId":null}"#, "a1"));
    /// ```
    pub fn holds(&self, line: &[u8], id: &str) -> bool {
        const ID: &[u8] = br#""id":""#;
        const MESSAGE: &[u8] = br#""message":"#;
        let (at, id) = (self.id(), id.as_bytes());
        let end = at + id.len();
        let message = self.message();
        line.starts_with(Self::HEAD)
            && line.get(at.wrapping_sub(ID.len())..at) == Some(ID)
            && line.get(at..end) == Some(id)
            && line.get(end) == Some(&b'"')
            && line.get(message.wrapping_sub(MESSAGE.len())..message) == Some(MESSAGE)
    }
}

/// The line's envelope as [`crate::parse_envelope_ref`] reads it, and the filter of its keys,
/// when one scan of the line proves that this parse succeeds and that the line needs no repair
/// and gives no encoding warning (see the module documentation for what "sure" takes); `None`
/// when it is not sure (the line may still be valid: the caller takes the full path, and
/// whoever keeps a key filter for it keeps [`KeyFilter::ANY`]).
///
/// ```
/// use pi_session_types::envelope_scan::scan_envelope;
/// let line = br#"{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"content":"hi \u00e9"}}"#;
/// let scanned = scan_envelope(line).unwrap();
/// let envelope = scanned.envelope;
/// assert_eq!((&*envelope.kind, envelope.id.as_deref(), envelope.parent_is_null), ("message", Some("a1"), true));
/// assert_eq!(Ok(envelope), pi_session_types::parse_envelope_ref(line));
/// assert!(scanned.keys.may_hold("content"));
/// assert!(!scanned.stringify_spelled); // `\u00e9`: `JSON.stringify` writes `é`
/// assert!(scan_envelope(br#"{"type":"x","text":"a\n\"b\""}"#).unwrap().stringify_spelled);
/// assert!(!scan_envelope(br#"{"type":"x", "text":"a"}"#).unwrap().stringify_spelled);
/// assert!(!scan_envelope(br#"{"type":"x","text":"a\/b"}"#).unwrap().stringify_spelled);
/// assert_eq!(&line[scanned.message_at.unwrap().message()..], r#"{"content":"hi \u00e9"}}"#.as_bytes());
/// let twice = br#"{"type":"x","message":{},"message":{}}"#;
/// assert_eq!(scan_envelope(twice).unwrap().message_at, None); // `JSON.parse` keeps the last
/// assert_eq!(scan_envelope(br#"{"type":"x","text":"\ud83d"}"#), None); // a surrogate escape
/// assert_eq!(scan_envelope(br#"{"type":"x",}"#), None); // not JSON
/// ```
pub fn scan_envelope(line: &[u8]) -> Option<Scanned<'_>> {
    let mut scan = Scan {
        bytes: line,
        at: 0,
        keys: 0,
        unusual: false,
    };
    scan.whitespace();
    scan.expect(b'{')?;
    let mut slots: [Slot; 4] = [Slot::Absent; 4];
    // Where the `message` starts; `Some(None)` once a second one is met.
    let mut message_at: Option<Option<usize>> = None;
    scan.whitespace();
    if scan.peek()? == b'}' {
        // `{}` has no `type`: the full path says so.
        return None;
    }
    loop {
        scan.whitespace();
        scan.expect(b'"')?;
        let (key, plain) = scan.short_text()?;
        if holds_escape(key, plain) {
            return None;
        }
        scan.keys |= KeyFilter::of_scanned(key, plain);
        scan.whitespace();
        scan.expect(b':')?;
        scan.whitespace();
        match envelope_key(key) {
            Some(slot) => {
                let value = scan.envelope_value()?;
                let slot = slots.get_mut(slot)?;
                if !matches!(slot, Slot::Absent) {
                    return None;
                }
                *slot = value;
            }
            None => {
                // As a fixed-size compare (no call): the key is not ASCII-checked here.
                if key.len() == 7 && key.first_chunk::<7>() == Some(b"message") {
                    message_at = Some(message_at.is_none().then_some(scan.at));
                }
                scan.value()?;
            }
        }
        scan.whitespace();
        match scan.next()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    scan.whitespace();
    if scan.at != line.len() {
        return None;
    }
    let id_text = match slots[1] {
        Slot::Text(start, _) => Some(start),
        Slot::Absent | Slot::Null => None,
    };
    let texts = EnvelopeTexts::of(line, &slots);
    let [kind, id, parent_id, timestamp] = slots;
    let envelope = EnvelopeRef {
        // A `type` absent or `null` is for the full path to report.
        kind: texts.of_slot(kind)??,
        id: texts.of_slot(id)?,
        parent_is_null: matches!(parent_id, Slot::Null),
        parent_id: texts.of_slot(parent_id)?,
        timestamp: texts.of_slot(timestamp)?,
    };
    Some(Scanned {
        envelope,
        keys: KeyFilter(scan.keys),
        stringify_spelled: !scan.unusual,
        message_at: message_at
            .flatten()
            .zip(id_text)
            .and_then(|(message, id)| MessageAt::new(message, id)),
    })
}

/// One envelope key's value as the scan read it.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Absent,
    Null,
    /// A string without escapes: where the line's bytes between its quotes start and end.
    Text(usize, usize),
}

/// The envelope's strings as `&str`. The scan has checked every string of the line as UTF-8,
/// but a `&str` is only had (without `unsafe`) from `std::str::from_utf8`, whose cost for a
/// short string is mostly the call's: one check of the stretch of the line that holds the four
/// (the first ~120 bytes of an entry pi or omp writes), then each cut out of it (a char
/// boundary check), instead of one check each (~100 instructions a string, 4% of the chain's
/// `check`).
struct EnvelopeTexts<'a> {
    line: &'a [u8],
    /// The stretch from the first string's start to the last one's end, and where it starts.
    stretch: Option<(&'a str, usize)>,
}

/// The longest stretch of a line checked at once for the envelope's strings; strings farther
/// apart (an envelope key after a message) are checked one by one.
const ENVELOPE_STRETCH_BYTES: usize = 512;

impl<'a> EnvelopeTexts<'a> {
    fn of(line: &'a [u8], slots: &[Slot; 4]) -> Self {
        let spans = slots.iter().filter_map(|slot| match slot {
            Slot::Text(start, end) => Some((*start, *end)),
            Slot::Absent | Slot::Null => None,
        });
        let start = spans.clone().map(|(start, _)| start).min();
        let end = spans.map(|(_, end)| end).max();
        let stretch = start.zip(end).and_then(|(start, end)| {
            (end - start <= ENVELOPE_STRETCH_BYTES)
                .then(|| std::str::from_utf8(line.get(start..end)?).ok())
                .flatten()
                .map(|text| (text, start))
        });
        Self { line, stretch }
    }

    /// The text of a string slot (`None`: not UTF-8, which the scan has ruled out).
    fn get(&self, start: usize, end: usize) -> Option<&'a str> {
        match self.stretch {
            Some((stretch, at)) => stretch.get(start - at..end - at),
            None => std::str::from_utf8(self.line.get(start..end)?).ok(),
        }
    }

    /// A slot's text: `Some(None)` for an absent or `null` one, `None` when it is not UTF-8.
    fn of_slot(&self, slot: Slot) -> Option<Option<Cow<'a, str>>> {
        match slot {
            Slot::Text(start, end) => self.get(start, end).map(|text| Some(Cow::Borrowed(text))),
            Slot::Absent | Slot::Null => Some(None),
        }
    }
}

/// The slot of an envelope key (`type`, `id`, `parentId`, `timestamp`), by its raw bytes.
fn envelope_key(key: &[u8]) -> Option<usize> {
    match key {
        b"type" => Some(0),
        b"id" => Some(1),
        b"parentId" => Some(2),
        b"timestamp" => Some(3),
        _ => None,
    }
}

/// The bytes of `chunk` a string scan stops at, bit `k` for byte `k`: a `"`, a `\\`, a control
/// character (< 0x20) or a byte that is not ASCII (>= 0x80; one signed compare catches the last
/// two). Three vector compares and a move-mask: SSE2 (baseline on x86_64) through `safe_arch`'s
/// safe wrappers of `core::arch` (LLVM builds no `pmovmskb` from a safe fold of compares).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
pub(crate) fn stops(chunk: &[u8; 16]) -> u16 {
    use safe_arch::{bitor_m128i, load_unaligned_m128i, move_mask_i8_m128i};
    let bytes = load_unaligned_m128i(chunk);
    let quote_or_backslash = bitor_m128i(sse2::equal(bytes, b'"'), sse2::equal(bytes, b'\\'));
    // The move-mask of 16 lanes fills the low 16 bits.
    move_mask_i8_m128i(bitor_m128i(quote_or_backslash, sse2::special(bytes))) as u16
}

/// The lane compares [`stops`] and [`escape_masks`] share.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use safe_arch::{cmp_eq_mask_i8_m128i, cmp_lt_mask_i8_m128i, m128i, set_splat_i8_m128i};

    /// All ones in the lanes of `bytes` equal to `byte`.
    #[inline(always)]
    pub(super) fn equal(bytes: m128i, byte: u8) -> m128i {
        cmp_eq_mask_i8_m128i(bytes, set_splat_i8_m128i(byte.cast_signed()))
    }

    /// All ones in the lanes of `bytes` that are a control character or not ASCII (one signed
    /// compare below 0x20).
    #[inline(always)]
    pub(super) fn special(bytes: m128i) -> m128i {
        cmp_lt_mask_i8_m128i(bytes, set_splat_i8_m128i(0x20))
    }
}

/// [`stops`] byte by byte: the other targets' answer (and the one the x86_64 mask is tested
/// against).
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
#[inline(always)]
fn stops_portable(chunk: &[u8; 16]) -> u16 {
    chunk.iter().enumerate().fold(0, |mask, (k, &byte)| {
        let stop = (byte.cast_signed() < 0x20) | (byte == b'"') | (byte == b'\\');
        mask | u16::from(stop) << k
    })
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
pub(crate) fn stops(chunk: &[u8; 16]) -> u16 {
    stops_portable(chunk)
}

/// The bytes of `chunk` that `JSON.stringify` escapes in a string, bit `k` for byte `k`: a
/// `"`, a `\\` or a control character (U+0000–U+001F); [`stops`] but for the bytes that are
/// not ASCII. For [`crate::json`]'s writer of strings.
#[inline(always)]
pub(crate) fn escaped(chunk: &[u8; 16]) -> u16 {
    escaped_and_not_ascii(chunk).0
}

/// [`escaped`] of `chunk`, and its bytes that are not ASCII (bit `k` for byte `k`), the mask
/// [`escaped`] takes anyway: for the writer of strings, which looks for a lone surrogate's carrier (never
/// ASCII) only in a text that has such a byte.
#[inline(always)]
pub(crate) fn escaped_and_not_ascii(chunk: &[u8; 16]) -> (u16, u16) {
    let not_ascii = not_ascii(chunk);
    (stops(chunk) & !not_ascii, not_ascii)
}

/// The quotes of `chunk`, bit `k` for byte `k`: one compare and a move-mask (SSE2). For a
/// search of a string's end that most often ends within 16 bytes (a key, a role, an id), where
/// a call of `memchr` costs more than the search.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
pub(crate) fn quotes(chunk: &[u8; 16]) -> u16 {
    use safe_arch::{load_unaligned_m128i, move_mask_i8_m128i};
    // The move-mask of 16 lanes fills the low 16 bits.
    move_mask_i8_m128i(sse2::equal(load_unaligned_m128i(chunk), b'"')) as u16
}

/// [`quotes`] byte by byte.
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
#[inline(always)]
fn quotes_portable(chunk: &[u8; 16]) -> u16 {
    chunk
        .iter()
        .enumerate()
        .fold(0, |mask, (k, &byte)| mask | u16::from(byte == b'"') << k)
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
pub(crate) fn quotes(chunk: &[u8; 16]) -> u16 {
    quotes_portable(chunk)
}

/// The bytes of `chunk` that are not ASCII, bit `k` for byte `k`: their top bits, one
/// move-mask (SSE2).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn not_ascii(chunk: &[u8; 16]) -> u16 {
    use safe_arch::{load_unaligned_m128i, move_mask_i8_m128i};
    // The move-mask of 16 lanes fills the low 16 bits.
    move_mask_i8_m128i(load_unaligned_m128i(chunk)) as u16
}

/// [`not_ascii`] byte by byte.
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
#[inline(always)]
fn not_ascii_portable(chunk: &[u8; 16]) -> u16 {
    chunk.iter().enumerate().fold(0, |mask, (k, &byte)| {
        mask | u16::from(!byte.is_ascii()) << k
    })
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn not_ascii(chunk: &[u8; 16]) -> u16 {
    not_ascii_portable(chunk)
}

/// The bit masks (bit `k` for byte `k`) of a run of bytes that [`only_escapes`] reads: 16 bytes
/// (one chunk) or 32 ([`EscapeMasks::then`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EscapeMasks {
    /// `"`.
    quote: u32,
    /// `\\`.
    backslash: u32,
    /// A control character or a byte that is not ASCII (one signed compare).
    special: u32,
    /// `n`, `t` or `"`: what follows the `\\` of an escape text is full of.
    letter: u32,
}

impl EscapeMasks {
    /// The masks of this chunk's 16 bytes followed by `next`'s.
    #[inline(always)]
    fn then(self, next: Self) -> Self {
        Self {
            quote: self.quote | next.quote << 16,
            backslash: self.backslash | next.backslash << 16,
            special: self.special | next.special << 16,
            letter: self.letter | next.letter << 16,
        }
    }
}

/// [`EscapeMasks`] of `chunk`: SSE2 compares and move-masks (as [`stops`]).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn escape_masks(chunk: &[u8; 16]) -> EscapeMasks {
    use safe_arch::{bitor_m128i, load_unaligned_m128i, move_mask_i8_m128i};
    let bytes = load_unaligned_m128i(chunk);
    let quote = sse2::equal(bytes, b'"');
    let letter = bitor_m128i(
        bitor_m128i(sse2::equal(bytes, b'n'), sse2::equal(bytes, b't')),
        quote,
    );
    // The move-mask of 16 lanes fills the low 16 bits.
    EscapeMasks {
        quote: move_mask_i8_m128i(quote) as u32,
        backslash: move_mask_i8_m128i(sse2::equal(bytes, b'\\')) as u32,
        special: move_mask_i8_m128i(sse2::special(bytes)) as u32,
        letter: move_mask_i8_m128i(letter) as u32,
    }
}

/// [`escape_masks`] byte by byte (as [`stops_portable`]).
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
#[inline(always)]
fn escape_masks_portable(chunk: &[u8; 16]) -> EscapeMasks {
    let mask = |is: fn(u8) -> bool| {
        chunk
            .iter()
            .enumerate()
            .fold(0, |mask, (k, &byte)| mask | u32::from(is(byte)) << k)
    };
    EscapeMasks {
        quote: mask(|byte| byte == b'"'),
        backslash: mask(|byte| byte == b'\\'),
        special: mask(|byte| byte.cast_signed() < 0x20),
        letter: mask(|byte| matches!(byte, b'n' | b't' | b'"')),
    }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn escape_masks(chunk: &[u8; 16]) -> EscapeMasks {
    escape_masks_portable(chunk)
}

/// Whether a run of 16 or 32 bytes of a string (not starting inside an escape) can be skipped
/// whole, from the masks of its chunks joined (bit `k` for byte `k`): each byte a string scan
/// stops at is a `\\` followed by `n`, `t` or `"` in the run (so not its last byte), or a `"`
/// so escaped (a `\\` before it, not before the run's first byte). A `\\` inside the run
/// escapes what follows it, as none is escaped: an escaped `\\` follows a `\\` not followed
/// by `n`, `t` or `"`.
#[inline(always)]
fn only_escapes(masks: EscapeMasks) -> bool {
    let bad = masks.special
        | masks.backslash & !(masks.letter >> 1)
        | masks.quote & !(masks.backslash << 1);
    bad == 0
}

/// From `at` inside a string (not inside an escape), past the runs whose only stops are the
/// common escapes ([`only_escapes`]): 32 bytes at a time, then 16; where such a run ends (at
/// most 15 bytes before the end of `bytes`, which it never reads past). Shared with
/// [`crate::json`]'s canonical walk.
#[inline(always)]
pub(crate) fn skip_common_escapes(bytes: &[u8], mut at: usize) -> usize {
    while let Some(run) = bytes.get(at..at + 32) {
        let (Some(low), Some(high)) = (run.first_chunk(), run.last_chunk()) else {
            break;
        };
        if !only_escapes(escape_masks(low).then(escape_masks(high))) {
            break;
        }
        at += 32;
    }
    // The 16 bytes before the stop that ended the run may be skipped still.
    while let Some(chunk) = bytes.get(at..at + 16).and_then(|c| c.first_chunk()) {
        if !only_escapes(escape_masks(chunk)) {
            break;
        }
        at += 16;
    }
    at
}

/// From `at` inside a string, past plain bytes 16 at a time: the first byte a string scan
/// stops at ([`stops`]) in the chunk that holds one, or where fewer than 16 bytes are left.
#[inline(always)]
pub(crate) fn skip_plain(bytes: &[u8], mut at: usize) -> usize {
    while let Some(chunk) = bytes.get(at..at + 16).and_then(|c| c.first_chunk()) {
        let stops = stops(chunk);
        if stops != 0 {
            return at + stops.trailing_zeros() as usize;
        }
        at += 16;
    }
    at
}

/// Most strings (keys, ids, short values) are plain ASCII that ends within their first 16
/// bytes: from `start` (past a string's opening quote), `Ok` with the offset of its closing
/// quote when it is one of them, told from one chunk's masks. Otherwise `Err` with where a
/// reader of the rest goes on from, the bytes before it being plain ASCII: the first byte a
/// string scan stops at, or past the 16 bytes when none holds one, or `start` when fewer than
/// 16 are left. The scan's strings ([`Scan::text`]) and [`crate::json`]'s canonical walk
/// start here.
#[inline(always)]
pub(crate) fn short_plain_end(bytes: &[u8], start: usize) -> Result<usize, usize> {
    let Some(chunk) = bytes.get(start..start + 16).and_then(|c| c.first_chunk()) else {
        return Err(start);
    };
    let masks = escape_masks(chunk);
    let stops = masks.quote | masks.backslash | masks.special;
    // No bit set: 32 trailing zeros, past the chunk.
    let first = (stops.trailing_zeros() as usize).min(16);
    if stops & stops.wrapping_neg() & masks.quote != 0 {
        Ok(start + first)
    } else {
        Err(start + first)
    }
}

/// Whether a text [`Scan::short_text`] read holds an escape: never when it is plain; one that
/// is not may be plain text that is not ASCII, so it is searched for a backslash.
#[inline(always)]
fn holds_escape(text: &[u8], plain: bool) -> bool {
    !plain && text.contains(&b'\\')
}

/// A cursor over the line's bytes. Every read is bounds-checked (`get`): bad input ends the
/// scan with `None`, never a panic.
struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The [`KeyFilter`] of the keys read so far.
    keys: u64,
    /// Whether whitespace between tokens, or an escape `JSON.stringify` does not write (`\/`,
    /// `\u`), was met ([`Scanned::stringify_spelled`]). Set where the scan meets them, off the
    /// paths of plain text and of the common escapes.
    unusual: bool,
}

impl<'a> Scan<'a> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    #[inline]
    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    #[inline]
    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    /// Skips JSON whitespace (serde_json's four bytes).
    #[inline]
    fn whitespace(&mut self) {
        if let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.spaced();
        }
    }

    /// [`Scan::whitespace`] where there is some (pi and omp write none between tokens): out
    /// of the way of the scan's loops.
    #[cold]
    #[inline(never)]
    fn spaced(&mut self) {
        self.unusual = true;
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// The rest of a literal whose first byte was read.
    fn literal(&mut self, rest: &[u8]) -> Option<()> {
        let end = self.at + rest.len();
        (self.bytes.get(self.at..end)? == rest).then(|| self.at = end)
    }

    /// An envelope key's value: a string without escapes (borrowed) or `null`.
    fn envelope_value(&mut self) -> Option<Slot> {
        match self.next()? {
            b'"' => {
                let start = self.at;
                let (text, plain) = self.short_text()?;
                if holds_escape(text, plain) {
                    return None;
                }
                // Checked as UTF-8 by the scan; made a `&str` with the others (EnvelopeTexts).
                Some(Slot::Text(start, start + text.len()))
            }
            b'n' => self.literal(b"ull").map(|()| Slot::Null),
            _ => None,
        }
    }

    /// The rest of a string whose opening quote was read, through its closing quote; its
    /// text as written (escapes not decoded).
    #[inline(always)]
    fn string(&mut self) -> Option<&'a [u8]> {
        self.text::<false>().map(|(text, _)| text)
    }

    /// [`Scan::string`] for a short string (an object key, an envelope value): its text, and
    /// whether it is plain (no escape, every byte ASCII; see [`holds_escape`]). The skip over
    /// common escapes is not tried (a string holding one reads it byte by byte, which is how
    /// the flag learns of it).
    #[inline(always)]
    fn short_text(&mut self) -> Option<(&'a [u8], bool)> {
        self.text::<true>()
    }

    /// [`Scan::string`] and [`Scan::short_text`]: `SHORT` tracks whether the text is plain (for
    /// a string, the flag is never read and compiles away).
    #[inline(always)]
    fn text<const SHORT: bool>(&mut self) -> Option<(&'a [u8], bool)> {
        let bytes = self.bytes;
        let start = self.at;
        // A short plain string is read without trying the skip below; any other is read on
        // from its first stop, the plain bytes before it not read again.
        let mut at = match short_plain_end(bytes, start) {
            Ok(end) => {
                self.at = end + 1;
                return bytes.get(start..end).map(|text| (text, true));
            }
            Err(at) => at,
        };
        let mut plain = true;
        loop {
            if !SHORT {
                at = skip_common_escapes(bytes, at);
            }
            at = skip_plain(bytes, at);
            match *bytes.get(at)? {
                b'"' => {
                    self.at = at + 1;
                    return bytes.get(start..at).map(|text| (text, plain));
                }
                b'\\' => {
                    plain = false;
                    // The escapes text is full of (`\n`, `\"`, ...) without leaving the loop.
                    if let Some(b'"' | b'b' | b'f' | b'n' | b'r' | b't') = bytes.get(at + 1) {
                        at += 2;
                    } else {
                        self.at = at;
                        self.escape()?;
                        at = self.at;
                    }
                }
                0..0x20 => return None,
                0x20..0x80 => at += 1,
                lead => {
                    plain = false;
                    self.at = at;
                    self.utf8(lead)?;
                    at = self.at;
                }
            }
        }
    }

    /// One escape at the cursor (its `\`).
    fn escape(&mut self) -> Option<()> {
        let at = self.at;
        match self.bytes.get(at + 1)? {
            b'"' | b'b' | b'f' | b'n' | b'r' | b't' => self.at = at + 2,
            b'/' => {
                self.unusual = true;
                self.at = at + 2;
            }
            b'\\' => {
                // The second backslash and what follows read as `\ud` to a byte search.
                if self.bytes.get(at + 2) == Some(&b'u')
                    && matches!(self.bytes.get(at + 3), Some(b'd' | b'D'))
                {
                    return None;
                }
                self.at = at + 2;
            }
            b'u' => {
                let hex = self.bytes.get(at + 2..at + 6)?;
                if matches!(hex.first(), Some(b'd' | b'D'))
                    || !hex.iter().all(u8::is_ascii_hexdigit)
                {
                    return None;
                }
                // `JSON.stringify` writes `\u` for the control characters without a short form
                // (a byte the walks check the escape of) and lone surrogates (refused above).
                self.unusual = true;
                self.at = at + 6;
            }
            _ => return None,
        }
        Some(())
    }

    /// One UTF-8 sequence of two to four bytes at the cursor, `lead` its first byte; none
    /// starting with 0xF4 (U+100000..U+10FFFF).
    #[inline]
    fn utf8(&mut self, lead: u8) -> Option<()> {
        let at = self.at;
        let continuation = |k: usize| matches!(self.bytes.get(at + k), Some(0x80..=0xBF));
        let len = match lead {
            0xC2..=0xDF => continuation(1).then_some(2),
            0xE0 => matches!(self.bytes.get(at + 1), Some(0xA0..=0xBF)).then_some(3),
            0xE1..=0xEC | 0xEE..=0xEF => continuation(1).then_some(3),
            0xED => matches!(self.bytes.get(at + 1), Some(0x80..=0x9F)).then_some(3),
            0xF0 => (matches!(self.bytes.get(at + 1), Some(0x90..=0xBF)) && continuation(3))
                .then_some(4),
            0xF1..=0xF3 => (continuation(1) && continuation(3)).then_some(4),
            _ => None,
        }?;
        if len >= 3 && !continuation(2) {
            return None;
        }
        self.at = at + len;
        Some(())
    }

    /// The rest of a number whose first byte (`-` or a digit) is at the cursor.
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }

    /// An object key and its colon, after the `{` or `,` before it; the key folded into
    /// [`Scan::keys`].
    #[inline(always)]
    fn key(&mut self) -> Option<()> {
        self.whitespace();
        self.expect(b'"')?;
        let (key, plain) = self.short_text()?;
        self.keys |= KeyFilter::of_scanned(key, plain);
        self.whitespace();
        self.expect(b':')
    }

    /// One value inside the line's object (at depth 1), skipped: iterative, the open
    /// containers a bit each (1 = object) in `open`.
    fn value(&mut self) -> Option<()> {
        let mut open: u128 = 0;
        let mut depth: u32 = 1;
        loop {
            // A value.
            self.whitespace();
            match self.next()? {
                b'"' => {
                    self.string()?;
                }
                b'{' => {
                    if depth == MAX_DEPTH {
                        return None;
                    }
                    self.whitespace();
                    if self.peek()? == b'}' {
                        self.at += 1;
                    } else {
                        depth += 1;
                        open = open << 1 | 1;
                        self.key()?;
                        continue;
                    }
                }
                b'[' => {
                    if depth == MAX_DEPTH {
                        return None;
                    }
                    self.whitespace();
                    if self.peek()? == b']' {
                        self.at += 1;
                    } else {
                        depth += 1;
                        open <<= 1;
                        continue;
                    }
                }
                b't' => self.literal(b"rue")?,
                b'f' => self.literal(b"alse")?,
                b'n' => self.literal(b"ull")?,
                b'-' | b'0'..=b'9' => {
                    self.at -= 1;
                    self.number()?;
                }
                _ => return None,
            }
            // After a value: close what ends here, up to the next value.
            loop {
                if depth == 1 {
                    return Some(());
                }
                self.whitespace();
                let in_object = open & 1 == 1;
                match (self.next()?, in_object) {
                    (b',', true) => {
                        self.key()?;
                        break;
                    }
                    (b',', false) => break,
                    (b'}', true) | (b']', false) => {
                        open >>= 1;
                        depth -= 1;
                    }
                    _ => return None,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{KeyFilter, scan_envelope};

    #[test]
    fn the_masks_flag_exactly_their_bytes_on_every_target() {
        // Every byte value at every position of a chunk, among plain bytes and among other
        // flagged ones: the x86_64 move-masks, the portable folds and the definitions agree.
        let is_stop = |byte: u8| !(0x20..0x80).contains(&byte) || byte == b'"' || byte == b'\\';
        for background in [b'a', b'n', b't', b'"', b'\\', 0x1f, 0x20, 0x7f, 0x80, 0xff] {
            for at in 0..16 {
                for byte in 0..=u8::MAX {
                    let mut chunk = [background; 16];
                    chunk[at] = byte;
                    let expected = chunk
                        .iter()
                        .enumerate()
                        .fold(0u16, |mask, (k, &b)| mask | u16::from(is_stop(b)) << k);
                    assert_eq!(super::stops(&chunk), expected, "{chunk:?}");
                    assert_eq!(super::stops_portable(&chunk), expected, "{chunk:?}");
                    let escaped = chunk.iter().enumerate().fold(0u16, |mask, (k, &b)| {
                        mask | u16::from(b < 0x20 || b == b'"' || b == b'\\') << k
                    });
                    assert_eq!(super::escaped(&chunk), escaped, "{chunk:?}");
                    let high = super::not_ascii_portable(&chunk);
                    assert_eq!(super::not_ascii(&chunk), high, "{chunk:?}");
                    let quotes = chunk
                        .iter()
                        .enumerate()
                        .fold(0u16, |mask, (k, &b)| mask | u16::from(b == b'"') << k);
                    assert_eq!(super::quotes(&chunk), quotes, "{chunk:?}");
                    assert_eq!(super::quotes_portable(&chunk), quotes, "{chunk:?}");
                    let mask = |is: fn(u8) -> bool| {
                        chunk
                            .iter()
                            .enumerate()
                            .fold(0u32, |mask, (k, &b)| mask | u32::from(is(b)) << k)
                    };
                    let escapes = super::EscapeMasks {
                        quote: mask(|b| b == b'"'),
                        backslash: mask(|b| b == b'\\'),
                        special: mask(|b| !(0x20..0x80).contains(&b)),
                        letter: mask(|b| b == b'n' || b == b't' || b == b'"'),
                    };
                    assert_eq!(super::escape_masks(&chunk), escapes, "{chunk:?}");
                    assert_eq!(super::escape_masks_portable(&chunk), escapes, "{chunk:?}");
                }
            }
        }
    }

    #[test]
    fn runs_of_common_escapes_are_skipped_whole() {
        use super::{escape_masks, only_escapes};
        let run_of = |run: &[u8; 32], len: usize| match (run.first_chunk(), run.last_chunk()) {
            (Some(low), _) if len == 16 => only_escapes(escape_masks(low)),
            (Some(low), Some(high)) => only_escapes(escape_masks(low).then(escape_masks(high))),
            _ => unreachable!(),
        };
        for len in [16, 32] {
            for at in 0..len {
                for (sequence, skipped) in [
                    (&b"\\n"[..], true),
                    (b"\\t", true),
                    (b"\\\"", true),
                    (b"\\\\", false),
                    (b"\\r", false),
                    (b"\\u", false),
                    (b"\"", false),
                    (b"\x1f", false),
                    (b"\x80", false),
                ] {
                    let mut run = [b'a'; 32];
                    for (k, &byte) in sequence.iter().enumerate() {
                        if let Some(slot) = run.get_mut(at + k) {
                            *slot = byte;
                        }
                    }
                    // An escape whose letter is past the run is not skipped with it.
                    let whole = at + sequence.len() <= len;
                    assert_eq!(
                        run_of(&run, len),
                        skipped && whole,
                        "{len} {at} {}",
                        String::from_utf8_lossy(sequence)
                    );
                }
            }
        }
    }

    #[test]
    fn the_key_filter_holds_every_key_at_every_depth() {
        let line = br#"{"type":"message","id":"a","top":1,"message":{"second":{"third":[{"deep_key":true}]},"list":[[{"in_arrays":null}]]}}"#;
        let keys = scan_envelope(line).unwrap().keys;
        for key in [
            "type",
            "id",
            "top",
            "message",
            "second",
            "third",
            "deep_key",
            "list",
            "in_arrays",
        ] {
            assert!(keys.may_hold(key), "{key}");
        }
        assert_ne!(keys, KeyFilter::ANY);
        // Values and strings are not keys.
        let values = scan_envelope(br#"{"type":"attachments","x":["attachments"]}"#)
            .unwrap()
            .keys;
        assert!(!values.may_hold("attachments"));
    }

    #[test]
    fn the_key_filter_says_no_to_most_absent_keys() {
        let line = br#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}"#;
        let keys = scan_envelope(line).unwrap().keys;
        let absent: Vec<String> = (0..1000).map(|n| format!("key{n}_{}", n % 7)).collect();
        let maybe = absent.iter().filter(|key| keys.may_hold(key)).count();
        // Nine keys set at most 18 of 64 bits: about 8% of absent keys read as "maybe".
        assert!(maybe < 200, "{maybe} of 1000 absent keys read as maybe");
        assert!(!keys.may_hold("attachments"));
    }

    #[test]
    fn an_escaped_or_non_ascii_key_sets_every_bit() {
        for line in [
            &br#"{"type":"m","x":{"\u0061ttachments":1}}"#[..],
            br#"{"type":"m","x":[{"a\nb":1}]}"#,
            br#"{"type":"m","x":{"\\":1}}"#,
            br#"{"type":"m","x":{"a_long_key_of_more_than_sixteen_bytes_\"_":1}}"#,
            "{\"type\":\"m\",\"x\":{\"caf\u{e9}\":1}}".as_bytes(),
        ] {
            let scanned = scan_envelope(line).unwrap();
            assert_eq!(
                scanned.keys,
                KeyFilter::ANY,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        // The escape in a string value is no key.
        let value = scan_envelope(br#"{"type":"m","x":"\u0061"}"#).unwrap().keys;
        assert_ne!(value, KeyFilter::ANY);
        assert_eq!(KeyFilter::of_key(b"a\\b"), KeyFilter::ANY);
        assert_eq!(
            KeyFilter::NONE.union(KeyFilter::of_key(b"ab")),
            KeyFilter::of_key(b"ab")
        );
        assert!(KeyFilter::from_bits(KeyFilter::of_key(b"ab").bits()).may_hold("ab"));
    }

    #[test]
    fn reads_the_envelope_of_an_ordinary_line() {
        let mut line = br#" {"type":"message","id":"a","parentId":"p","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"h\u00e9 \"q\" \\ / \n caf\u00e9 caf"#.to_vec();
        line.extend_from_slice("\u{e9} \u{20ac} \u{1f600} \u{7f}".as_bytes());
        line.extend_from_slice(br#""}],"n":[-0,1e999,0.5,1E+2,true,false,null,{},[]]}}"#);
        line.extend_from_slice(b" \t\r\n");
        let line = &line[..];
        let envelope = scan_envelope(line).unwrap().envelope;
        assert_eq!(&*envelope.kind, "message");
        assert_eq!(envelope.id.as_deref(), Some("a"));
        assert_eq!(envelope.parent_id.as_deref(), Some("p"));
        assert!(!envelope.parent_is_null);
        assert_eq!(
            envelope.timestamp.as_deref(),
            Some("2026-01-01T00:00:00.000Z")
        );
    }

    /// The envelope's strings are cut out of one checked stretch of the line when they are
    /// close together, and checked one by one when a long value lies between them: both read
    /// as the full parse does, text that is not ASCII included (in the envelope and between).
    #[test]
    fn envelope_strings_near_and_far_read_as_the_full_parse() {
        let long = "é".repeat(400);
        let lines = [
            format!(r#"{{"type":"mé","id":"€1","parentId":null,"timestamp":"t😀","x":"{long}"}}"#),
            format!(r#"{{"type":"m","x":"{long}","id":"i","parentId":"p€","timestamp":"t"}}"#),
            format!(r#"{{"id":"i","x":"{long}{long}","type":"é"}}"#),
            r#"{"type":"m","x":"é","id":"€","timestamp":"2026"}"#.to_owned(),
            r#"{"timestamp":"","type":"","id":"","parentId":""}"#.to_owned(),
        ];
        for line in &lines {
            let scanned = scan_envelope(line.as_bytes()).unwrap().envelope;
            assert_eq!(
                Ok(scanned),
                crate::parse_envelope_ref(line.as_bytes()),
                "{line}"
            );
        }
    }

    #[test]
    fn is_not_sure_of_anything_unusual() {
        for line in [
            &br#"{"type":"a","type":"b"}"#[..],
            br#"{"type":"a","id":1}"#,
            br#"{"type":"a\u0062"}"#,
            br#"{"typ\u0065":"a"}"#,
            br#"{"type":null}"#,
            br#"{"id":"a"}"#,
            br#"{}"#,
            br#"[]"#,
            br#""x""#,
            br#"{"type":"a","x":"\uD800"}"#,
            br#"{"type":"a","x":"\\ud"}"#,
            br#"{"type":"a","x":"\u12"}"#,
            br#"{"type":"a","x":"\u12g4"}"#,
            br#"{"type":"a","x":"\x"}"#,
            b"{\"type\":\"a\",\"x\":\"\t\"}",
            b"{\"type\":\"a\",\"x\":\"\xf4\x80\x80\x80\"}",
            b"{\"type\":\"a\",\"x\":\"\xc0\xaf\"}",
            b"{\"type\":\"a\",\"x\":\"\xed\xa0\x80\"}",
            b"{\"type\":\"a\",\"x\":\"\xe2\x82\"}",
            b"\xef\xbb\xbf{\"type\":\"a\"}",
            br#"{"type":"a","x":01}"#,
            br#"{"type":"a","x":1.}"#,
            br#"{"type":"a","x":.5}"#,
            br#"{"type":"a","x":-}"#,
            br#"{"type":"a","x":[1,]}"#,
            br#"{"type":"a",}"#,
            br#"{"type":"a"} x"#,
            br#"{"type":"a"}{"type":"b"}"#,
            br#"{"type":"a","x":tru}"#,
            br#"{"type":"a""#,
        ] {
            assert_eq!(
                scan_envelope(line),
                None,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn nests_up_to_the_limit() {
        let nested = |depth: usize| {
            let mut line = br#"{"type":"a","x":"#.to_vec();
            line.extend(std::iter::repeat_n(b'[', depth));
            line.extend(std::iter::repeat_n(b']', depth));
            line.push(b'}');
            line
        };
        // The line's object is depth 1, so `MAX_DEPTH - 1` arrays fit.
        let fits = super::MAX_DEPTH as usize - 1;
        assert!(scan_envelope(&nested(fits)).is_some());
        assert_eq!(scan_envelope(&nested(fits + 1)), None);
    }
}
