//! A `message` entry's line read as JSON cut down to a few keys of the entry and of its
//! `message`: for a caller whose rules read only those keys and take the message as the line's
//! bytes (a context that copies a message it sends unchanged from the file, see the facade's
//! `Session::context_json_at`). The other keys are skipped as the envelope parse skips bodies,
//! never built.

use serde_json::{Map, Value};
use std::cell::Cell;

use crate::envelope_scan::MessageAt;
use crate::json::{self, Strings};
use crate::value_read::{self, Listed};
use crate::view::key;

/// The keys a reader takes of a `message` entry's line ([`entry_with_message_keys`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keys {
    /// The entry's own keys kept (`message` among them: a line without it is refused).
    pub entry: &'static [&'static str],
    /// The keys of its `message` kept.
    pub message: &'static [&'static str],
    /// The keys kept of each object in the message's `content`, when `message` keeps
    /// `content` and it is an array (its other items, and a `content` of another kind, are
    /// read whole); empty: `content` is read whole.
    pub blocks: &'static [&'static str],
}

/// The line's object as `serde_json::from_slice` reads it, cut down to `keys.entry`, its
/// `message` to `keys.message` (those present, in the line's order; every other value
/// skipped, never built), and the bytes of the message; `None` when the line is not a JSON
/// object, its `message` is not an object or is missing, a key is spelled with an escape (it
/// could spell a kept one), a kept key appears twice, or a kept value does not parse (the
/// caller then reads the line whole). Values skipped are not checked: this is for lines known
/// to be JSON (the store checked them when it opened the file).
///
/// ```
/// use pi_session_types::shallow::{Keys, entry_with_message_keys};
/// use serde_json::json;
/// let line = br#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"long"}}"#;
/// let keys = Keys { entry: &["type", "id", "message"], message: &["role", "provider"], blocks: &[] };
/// let (entry, message) = entry_with_message_keys(line, &keys).unwrap();
/// assert_eq!(entry, json!({"type":"message","id":"a","message":{"role":"user"}}));
/// assert_eq!(message, br#"{"role":"user","content":"long"}"#);
/// assert_eq!(entry_with_message_keys(br#"{"type":"message","message":null}"#, &keys), None);
/// ```
pub fn entry_with_message_keys<'l>(line: &'l [u8], keys: &Keys) -> Option<(Value, &'l [u8])> {
    let EntryMembers {
        mut entry,
        message:
            MessageMembers {
                mut members,
                content,
                bytes,
            },
    } = entry_members(line, keys, |rest| member_of(keys, key::CONTENT, rest))?;
    if let Some(content) = content {
        put_back(&mut members, key::CONTENT, content);
    }
    put_back(&mut entry, key::MESSAGE, object_of(members));
    Some((object_of(entry), bytes))
}

/// What [`entry_members`] read of a line: the kept members of the entry, in the line's order,
/// `message` held by a stand-in (`null`) where it is, and those of its message.
struct EntryMembers<'l, C> {
    entry: Vec<(&'static str, Value)>,
    message: MessageMembers<'l, C>,
}

/// The one walk of a `message` entry's line that [`entry_with_message_keys`] and
/// [`listed_entry_with_message_keys`] share: the line's members (whitespace around the object
/// allowed, nothing after it), the message's read where they are (its kept values parsed in
/// place, the others skipped: its bytes are known once they are, not skipped whole first), its
/// `content` by `content` (given the bytes from the value on, it gives the value read and its
/// length). `None` where [`entry_with_message_keys`] says.
fn entry_members<'l, C>(
    line: &'l [u8],
    keys: &Keys,
    mut content: impl FnMut(&'l [u8]) -> Option<(C, usize)>,
) -> Option<EntryMembers<'l, C>> {
    let mut message = None;
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let start = line.iter().position(|b| !is_space(b))?;
    let (entry, len) = member_list(&line[start..], keys.entry, |name, rest| {
        if name != key::MESSAGE {
            return value_at(rest);
        }
        let read = message_members(rest, keys, &mut content)?;
        let len = read.bytes.len();
        message = Some(read);
        Some((Value::Null, len))
    })?;
    let after = &line[start + len..];
    if !after.iter().all(is_space) {
        return None;
    }
    Some(EntryMembers {
        entry,
        message: message?,
    })
}

/// What [`message_members`] read of a message.
struct MessageMembers<'l, C> {
    /// Its kept members in the line's order, `content` held by a stand-in (`null`).
    members: Vec<(&'static str, Value)>,
    /// Its `content`, when kept and present, read by the caller's reader.
    content: Option<C>,
    /// The message's bytes.
    bytes: &'l [u8],
}

/// The kept members of the message that starts `rest` (`keys.message`), read where they are,
/// its `content` by `content` (given the bytes from the value on, it gives the value read and
/// its length): the message's part of [`entry_members`], and all that
/// [`listed_entry_with_message_keys_proven`] reads.
fn message_members<'l, C>(
    rest: &'l [u8],
    keys: &Keys,
    mut content: impl FnMut(&'l [u8]) -> Option<(C, usize)>,
) -> Option<MessageMembers<'l, C>> {
    let mut read_content = None;
    let (members, len) = member_list(rest, keys.message, |name, rest| {
        if name != key::CONTENT {
            return value_at(rest);
        }
        let (read, len) = content(rest)?;
        read_content = Some(read);
        Some((Value::Null, len))
    })?;
    Some(MessageMembers {
        members,
        content: read_content,
        bytes: &rest[..len],
    })
}

/// `value` in the place of `name`'s stand-in in `members`.
fn put_back(members: &mut [(&'static str, Value)], name: &str, value: Value) {
    if let Some((_, stand_in)) = members.iter_mut().find(|(kept, _)| *kept == name) {
        *stand_in = value;
    }
}

/// A `message` entry's line as [`listed_entry_with_message_keys`] reads it: the keys kept of
/// the entry and of its message as lists (in the line's order), the message's `content` read
/// with its blocks as lists of their members ([`value_read::read_listed`]). No map is made.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedEntry {
    /// The entry's kept keys but `message`, with their values.
    pub entry: Vec<(&'static str, Value)>,
    /// The message's kept keys but `content`, with their values.
    pub message: Vec<(&'static str, Value)>,
    /// The message's `content`, when it keeps it and the message holds it.
    pub content: Option<Listed>,
}

impl ListedEntry {
    /// The entry's value as [`entry_with_message_keys`] gives it for the same line and keys.
    pub fn into_value(self) -> Value {
        let mut message: Vec<(&'static str, Value)> = self.message;
        let mut entry: Vec<(&'static str, Value)> = self.entry;
        // Put back where the line has them is not known here: the caller compares maps,
        // whose equality does not look at the order.
        if let Some(content) = self.content {
            message.push((key::CONTENT, content.into_value()));
        }
        entry.push((key::MESSAGE, object_of(message)));
        object_of(entry)
    }
}

/// [`entry_with_message_keys`] without a map: the keys kept as lists, the `content` of the
/// message read as [`value_read::read_listed`] reads it (its blocks as their members), or,
/// when `keys.blocks` names the keys kept of each block, as
/// [`value_read::read_listed_keeping`] reads it (the blocks' other members stepped over
/// unread). It reads and refuses what [`entry_with_message_keys`] does:
/// [`ListedEntry::into_value`] of its answer is that one's value (as a map: the order of its
/// keys aside).
///
/// ```
/// use pi_session_types::shallow::{Keys, entry_with_message_keys, listed_entry_with_message_keys};
/// use pi_session_types::value_read::{Element, Listed};
/// use serde_json::json;
/// let line = br#"{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#;
/// let keys = Keys { entry: &["type", "id", "message"], message: &["role", "content"], blocks: &[] };
/// let (listed, message) = listed_entry_with_message_keys(line, &keys).unwrap();
/// assert_eq!(listed.entry, [("type", json!("message")), ("id", json!("a"))]);
/// assert_eq!(listed.message, [("role", json!("user"))]);
/// let block = vec![("type".into(), json!("text").into()), ("text".into(), json!("hi").into())];
/// assert_eq!(listed.content, Some(Listed::Array(vec![Element::Object(block)])));
/// assert_eq!(Some((listed.into_value(), message)), entry_with_message_keys(line, &keys));
/// ```
pub fn listed_entry_with_message_keys<'l>(
    line: &'l [u8],
    keys: &Keys,
) -> Option<(ListedEntry, &'l [u8])> {
    listed_entry_with_message_keys_given(line, Strings::Unknown, keys)
}

/// [`listed_entry_with_message_keys`] of a line whose strings are known to be `strings`: for
/// a line the open's scan proved [`Strings::Stringified`], the texts of the message's
/// `content` are found by a search for their closing quotes and copied unchecked
/// ([`value_read::read_listed_keeping_given`]), to the same answer. Say so only of a line a
/// scan proved.
pub fn listed_entry_with_message_keys_given<'l>(
    line: &'l [u8],
    strings: Strings,
    keys: &Keys,
) -> Option<(ListedEntry, &'l [u8])> {
    let EntryMembers { mut entry, message } =
        entry_members(line, keys, |rest| listed_at(rest, keys.blocks, strings))?;
    entry.retain(|(name, _)| *name != key::MESSAGE);
    Some(listed(entry, message))
}

/// The [`ListedEntry`] of an entry's kept members (`message` left out) and its message's, and
/// the message's bytes.
fn listed<'l>(
    entry: Vec<(&'static str, Value)>,
    message: MessageMembers<'l, Listed>,
) -> (ListedEntry, &'l [u8]) {
    let MessageMembers {
        mut members,
        content,
        bytes,
    } = message;
    members.retain(|(name, _)| *name != key::CONTENT);
    (
        ListedEntry {
            entry,
            message: members,
            content,
        },
        bytes,
    )
}

/// [`listed_entry_with_message_keys_given`] of a line whose message and id the open's scan
/// found at `at` ([`LaidOut::proven`]), the line of the `message` entry whose id is `id`: the
/// members around the message are not read, the entry's `type` and `id` (the only entry keys
/// kept with `message` this reads for) given as `message` and `id` once
/// [`MessageAt::holds`] tells the line still starts as scanned and holds that id there.
/// `None` when it does not, or when `keys.entry` keeps another key (the caller reads the line
/// whole then), or where [`listed_entry_with_message_keys_given`] refuses the message.
///
/// ```
/// use pi_session_types::envelope_scan::scan_envelope;
/// use pi_session_types::json::Strings;
/// use pi_session_types::shallow::{Keys, listed_entry_with_message_keys_given, listed_entry_with_message_keys_proven};
/// let keys = Keys { entry: &["type", "id", "message"], message: &["role", "content"], blocks: &[] };
/// let line = br#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi"}}"#;
/// let at = scan_envelope(line).unwrap().message_at.unwrap();
/// let proven = listed_entry_with_message_keys_proven(line, at, "a", Strings::Unknown, &keys);
/// assert_eq!(proven, listed_entry_with_message_keys_given(line, Strings::Unknown, &keys));
/// assert_eq!(listed_entry_with_message_keys_proven(line, at, "b", Strings::Unknown, &keys), None);
/// ```
pub fn listed_entry_with_message_keys_proven<'l>(
    line: &'l [u8],
    at: MessageAt,
    id: &str,
    strings: Strings,
    keys: &Keys,
) -> Option<(ListedEntry, &'l [u8])> {
    if !at.holds(line, id) {
        return None;
    }
    let kept = |name: &str| keys.entry.contains(&name);
    if !keys
        .entry
        .iter()
        .all(|&name| matches!(name, key::TYPE | key::ID | key::MESSAGE))
    {
        return None;
    }
    // The line starts with its `type` (`holds`), its `id` after: in the line's order.
    let entry: Vec<(&'static str, Value)> = [(key::TYPE, "message"), (key::ID, id)]
        .into_iter()
        .filter(|(name, _)| kept(name))
        .map(|(name, value)| (name, Value::String(value.to_owned())))
        .collect();
    let message = message_members(line.get(at.message()..)?, keys, |rest| {
        listed_at(rest, keys.blocks, strings)
    })?;
    Some(listed(entry, message))
}

/// [`value_at`] as [`value_read::read_listed`] reads it: an array's objects as their members,
/// cut down to `blocks` ([`value_read::read_listed_keeping`]) unless it is empty.
fn listed_at(rest: &[u8], blocks: &[&'static str], strings: Strings) -> Option<(Listed, usize)> {
    if let Some(b'"') = rest.first()
        && let Some(read) = value_read::read_listed_given(rest, strings)
    {
        // A string content, kept as its spelling.
        return Some(read);
    }
    if rest.first() == Some(&b'[') {
        let read = match blocks {
            [] => value_read::read_listed_given(rest, strings),
            kept => value_read::read_listed_keeping_given(rest, kept, strings),
        };
        if read.is_some() {
            return read;
        }
        if !blocks.is_empty() {
            // Refused: on JSON the block-by-block walk refuses it too ([`blocks_walked`], held
            // to it by a property test).
            return None;
        }
    }
    value_at(rest).map(|(value, len)| (Listed::Other(value_read::Field::Other(value)), len))
}

/// [`entry_with_message_keys`] of a line whose message is `JSON.stringify`'s spelling
/// ([`json::is_js_canonical`]): the check and the keys' search in one pass over the message
/// instead of a skip of the line, a search of the message's keys and a check of the message.
/// The members around the message are read without a check of their spelling when the line
/// is laid out as pi and omp write one (no whitespace between tokens, no key twice or spelled
/// with an escape, a few members); a line laid out otherwise must be canonical as a whole
/// ([`json::canonical_members`]). `None` when it is not, or for what
/// [`entry_with_message_keys`] refuses; a caller then tries that.
///
/// ```
/// use pi_session_types::shallow::{Keys, canonical_entry_with_message_keys};
/// use serde_json::json;
/// let line = br#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"long"}}"#;
/// let keys = Keys { entry: &["type", "id", "message"], message: &["role", "provider"], blocks: &[] };
/// let (entry, message) = canonical_entry_with_message_keys(line, &keys).unwrap();
/// assert_eq!(entry, json!({"type":"message","id":"a","message":{"role":"user"}}));
/// assert_eq!(message, br#"{"role":"user","content":"long"}"#);
/// let spaced = br#"{"type":"message", "message":{"role":"user"}}"#;
/// assert_eq!(canonical_entry_with_message_keys(spaced, &keys), None);
/// ```
pub fn canonical_entry_with_message_keys<'l>(
    line: &'l [u8],
    keys: &Keys,
) -> Option<(Value, &'l [u8])> {
    canonical_entry_with_message_keys_given(line, Strings::Unknown, keys)
}

/// [`canonical_entry_with_message_keys`] of a line whose strings are known to be spelled as
/// `JSON.stringify` spells them when `strings` says so (the open's scan found it so,
/// [`json::Strings`]): the message's strings are stepped over by their quotes, not read.
///
/// ```
/// use pi_session_types::envelope_scan::scan_envelope;
/// use pi_session_types::json::Strings;
/// use pi_session_types::shallow::{Keys, canonical_entry_with_message_keys, canonical_entry_with_message_keys_given};
/// let line = br#"{"type":"message","id":"a","message":{"role":"user","content":"a\n\"long\" text"}}"#;
/// let keys = Keys { entry: &["type", "id", "message"], message: &["role"], blocks: &[] };
/// let strings = Strings::of_scanned(&scan_envelope(line).unwrap());
/// assert_eq!(strings, Strings::Stringified);
/// assert_eq!(
///     canonical_entry_with_message_keys_given(line, strings, &keys),
///     canonical_entry_with_message_keys(line, &keys),
/// );
/// ```
pub fn canonical_entry_with_message_keys_given<'l>(
    line: &'l [u8],
    strings: Strings,
    keys: &Keys,
) -> Option<(Value, &'l [u8])> {
    if !keys.entry.contains(&key::MESSAGE) {
        return None;
    }
    // Built on the walk itself (a canonical object holds no key twice).
    struct Read {
        entry: Map<String, Value>,
        inner: Map<String, Value>,
    }
    let mut read = Read {
        entry: Map::with_capacity(keys.entry.len()),
        inner: Map::with_capacity(keys.message.len()),
    };
    let message = canonical_message_members(
        &LaidOut::of(line),
        strings,
        keys,
        &mut read,
        |read, name, value, escaped| {
            let Some(&name) = keys.entry.iter().find(|k| k.as_bytes() == name) else {
                return true;
            };
            let value = if name == key::MESSAGE {
                Some(Value::Object(std::mem::take(&mut read.inner)))
            } else {
                canonical_value(value, escaped)
            };
            value
                .map(|value| read.entry.insert(name.to_owned(), value))
                .is_some()
        },
        |read, name, value| {
            read.inner.insert(name.to_owned(), value.into_value());
        },
    )?;
    Some((Value::Object(read.entry), message))
}

/// The canonical walk of a `message` line for [`canonical_entry_with_message_keys`] and
/// [`canonical_keyed_message`], over the caller's `state`: each top-level member is handed to
/// `top` (its key as written and its bytes), each kept member of the message, read, to
/// `inner` (before `top` is handed the `message` member: the walk hands out an object's
/// members before the member that holds it). The bytes of the line's message, an object;
/// `None` when it has none, the message is not canonical, a key is spelled with an escape (it
/// could spell a kept one), a kept member of the message does not read whole, or `top`
/// refuses a member.
///
/// Only the message is walked for its spelling ([`laid_out_members`]): what the caller takes
/// as written is the message, and the line's other members were checked as JSON when the
/// store opened the file. A line the quick reading does not follow (a key repeated, more than
/// a few members, whitespace between them) is walked whole, as before, and must then be
/// canonical as a whole.
fn canonical_message_members<'l, S>(
    laid: &LaidOut<'l>,
    strings: Strings,
    keys: &Keys,
    state: &mut S,
    mut top: impl FnMut(&mut S, &'l [u8], &'l [u8], bool) -> bool,
    mut inner: impl FnMut(&mut S, &'static str, Kept),
) -> Option<&'l [u8]> {
    let line = laid.line;
    if let Some(at) = laid.proven {
        return proven_members(
            line,
            at.message(),
            strings,
            keys,
            state,
            &mut top,
            &mut inner,
        );
    }
    if let Some(head) = &laid.head {
        return laid_out_members(line, head, strings, keys, state, &mut top, &mut inner);
    }
    let mut refused = false;
    let mut message = None;
    let canonical = json::canonical_members_marked(line, key::MESSAGE, strings, |met| {
        refused |= met.key_escaped;
        if refused {
            return;
        }
        let (name, value) = (met.key, met.value);
        refused = match met.of {
            json::MemberOf::Top => {
                if name == key::MESSAGE.as_bytes() {
                    message = Some(value);
                }
                !top(state, name, value, met.value_escaped)
            }
            json::MemberOf::Inner => !inner_member(keys, &met, state, &mut inner),
        };
    });
    message.filter(|message| canonical && !refused && message.starts_with(b"{"))
}

/// A member of a line's message as the walk hands it out (`met`), given to `inner` read when
/// it is one `keys.message` keeps; `false` when the line is refused: the key is spelled with an
/// escape (it could spell a kept one), or a kept value does not read whole.
fn inner_member<S>(
    keys: &Keys,
    met: &json::Met<'_>,
    state: &mut S,
    inner: &mut impl FnMut(&mut S, &'static str, Kept),
) -> bool {
    if met.key_escaped {
        return false;
    }
    let Some(&name) = keys.message.iter().find(|k| k.as_bytes() == met.key) else {
        return true;
    };
    let read = if name == key::CONTENT && !keys.blocks.is_empty() {
        // An array of blocks is kept as their lists (no map made of each); anything else, or
        // what that reader leaves, as [`member_of`] reads it.
        match value_read::read_listed_keeping(met.value, keys.blocks) {
            Some((Listed::Array(blocks), len)) if len == met.value.len() => {
                Some(Kept::Blocks(blocks))
            }
            _ => member_of(keys, name, met.value)
                .filter(|&(_, len)| len == met.value.len())
                .map(|(read, _)| Kept::Value(read)),
        }
    } else {
        canonical_value(met.value, met.value_escaped).map(Kept::Value)
    };
    read.map(|read| inner(state, name, read)).is_some()
}

/// A kept member of a message as [`inner_member`] reads it.
enum Kept {
    /// Its value.
    Value(Value),
    /// A `content` array cut down to [`Keys::blocks`], its items as lists.
    Blocks(Vec<value_read::Element>),
}

impl Kept {
    fn into_value(self) -> Value {
        match self {
            Kept::Value(value) => value,
            Kept::Blocks(blocks) => Listed::Array(blocks).into_value(),
        }
    }
}

/// The most members [`laid_out_members`] reads before the message, and after it.
const LAID_OUT_MEMBERS: usize = 8;

/// [`canonical_message_members`] of a line laid out as pi and omp write a message entry (an
/// object of a few members, no whitespace between tokens, keys without escapes, none twice):
/// the members before and after `message` are found without a check of their spelling (the
/// store checked the line as JSON when it opened the file, and what is sent is the message)
/// and only the message is walked ([`json::canonical_inner_value`]). A line spelled otherwise
/// before its message (no head found, [`LaidOut::of`]) is walked whole; from the message on the
/// answer is this one (where the whole line's walk would refuse, so does this).
fn laid_out_members<'l, S>(
    line: &'l [u8],
    head: &LaidHead<'l>,
    strings: Strings,
    keys: &Keys,
    state: &mut S,
    top: &mut impl FnMut(&mut S, &'l [u8], &'l [u8], bool) -> bool,
    inner: &mut impl FnMut(&mut S, &'static str, Kept),
) -> Option<&'l [u8]> {
    let (before, count, start) = (&head.before, head.count, head.message);
    // From here on the answer is this one: what the whole line's walk hands out, in its order.
    for &(name, value, escaped) in &before[..count] {
        if !top(state, name, value, escaped) {
            return None;
        }
    }
    let message = proven_members(line, start, strings, keys, state, top, inner)?;
    let end = start + message.len();
    let mut after: [&[u8]; LAID_OUT_MEMBERS] = [&[]; LAID_OUT_MEMBERS];
    let mut later = 0;
    let mut at = end;
    loop {
        match line.get(at) {
            Some(b'}') if at + 1 == line.len() => return Some(message),
            Some(b',') => at += 1,
            _ => return None,
        }
        let (name, start) = plain_key(line, at)?;
        let (end, escaped) = value_end(line, start)?;
        if later == LAID_OUT_MEMBERS
            || name == key::MESSAGE.as_bytes()
            || before[..count].iter().any(|(seen, ..)| *seen == name)
            || after[..later].contains(&name)
        {
            return None;
        }
        if !top(state, name, &line[start..end], escaped) {
            return None;
        }
        after[later] = name;
        later += 1;
        at = end;
    }
}

/// [`canonical_message_members`] of a line whose message the open's scan found at `start`
/// ([`LaidOut::proven`]): only the message is walked and handed to `top`; the members around it
/// are not read (the scan read the envelope, and found no second `message`). Also the walk of
/// the message of a line whose head [`laid_out_members`] read.
fn proven_members<'l, S>(
    line: &'l [u8],
    start: usize,
    strings: Strings,
    keys: &Keys,
    state: &mut S,
    top: &mut impl FnMut(&mut S, &'l [u8], &'l [u8], bool) -> bool,
    inner: &mut impl FnMut(&mut S, &'static str, Kept),
) -> Option<&'l [u8]> {
    if line.get(start) != Some(&b'{') {
        return None;
    }
    let mut refused = false;
    let end = json::canonical_inner_value(line, start, strings, |met| {
        refused = refused || !inner_member(keys, &met, state, inner);
    });
    let message = end.filter(|_| !refused).map(|end| &line[start..end])?;
    top(state, key::MESSAGE.as_bytes(), message, false).then_some(message)
}

/// A member before `message` as [`laid_out_head`] finds it: its key as written, its value's
/// bytes, and whether the value is a string holding an escape.
type HeadMember<'l> = (&'l [u8], &'l [u8], bool);

/// The members before `message` of a line laid out as pi and omp write a message entry, and
/// where the message's value starts.
#[derive(Clone, Copy)]
struct LaidHead<'l> {
    /// The members, `count` of them, in order.
    before: [HeadMember<'l>; LAID_OUT_MEMBERS],
    /// How many of `before` are members.
    count: usize,
    /// The offset of the message's value.
    message: usize,
}

/// [`LaidHead`] of `line` (an object whose members before `message` are at most
/// [`LAID_OUT_MEMBERS`], with plain keys, none twice, no whitespace between tokens: found
/// without a check of their spelling, which the store made at open); `None` for a line laid
/// out otherwise. The first step of [`laid_out_members`] and [`laid_out_role`].
fn laid_out_head(line: &[u8]) -> Option<LaidHead<'_>> {
    let mut head = LaidHead {
        before: [(&[], &[], false); LAID_OUT_MEMBERS],
        count: 0,
        message: 0,
    };
    if line.first() != Some(&b'{') {
        return None;
    }
    let mut at = 1;
    loop {
        let (name, start) = plain_key(line, at)?;
        if name == key::MESSAGE.as_bytes() {
            head.message = start;
            return Some(head);
        }
        let (end, escaped) = value_end(line, start)?;
        if head.count == LAID_OUT_MEMBERS
            || head.before[..head.count]
                .iter()
                .any(|(seen, ..)| *seen == name)
            || line.get(end) != Some(&b',')
        {
            return None;
        }
        head.before[head.count] = (name, &line[start..end], escaped);
        head.count += 1;
        at = end + 1;
    }
}

/// The role of the message of a `message` line laid out as pi and omp write one, as written
/// between its quotes: the first member of the line's top-level `message` object, a string
/// without an escape, the members before `message` as the quick readers find them (a few, no
/// key twice or spelled with an escape, no whitespace between tokens). `None` for any other
/// line (a caller then knows nothing of the role). Nothing past the role is read, so nothing
/// says the line holds no second `message`, nor its message a second `role` (JSON.parse keeps
/// the last): a caller trusts the answer only where such a line is refused anyway, as the
/// readers of a message's keys refuse a kept key given twice ([`entry_with_message_keys`],
/// [`canonical_keyed_message`]).
///
/// ```
/// use pi_session_types::shallow::laid_out_role;
/// let line = br#"{"type":"message","id":"a","parentId":null,"message":{"role":"toolResult","content":[]}}"#;
/// assert_eq!(laid_out_role(line), Some(&b"toolResult"[..]));
/// assert_eq!(laid_out_role(br#"{"type":"message","message":{"content":[],"role":"user"}}"#), None);
/// assert_eq!(laid_out_role(br#"{"type":"message", "message":{"role":"user"}}"#), None);
/// assert_eq!(laid_out_role(br#"{"type":"message","message":{"role":"\u0075ser"}}"#), None);
/// ```
pub fn laid_out_role(line: &[u8]) -> Option<&[u8]> {
    LaidOut::of(line).role()
}

/// A `message` line with its members before the message found once, when it is laid out as pi
/// and omp write one (an object of a few members before its `message`, plain keys, none
/// twice, no whitespace between tokens): for a caller that asks its role ([`LaidOut::role`])
/// and then reads its message's keys ([`canonical_keyed_message_laid`]), which would each find
/// them again.
///
/// ```
/// use pi_session_types::shallow::{LaidOut, laid_out_role};
/// let line = br#"{"type":"message","id":"a","message":{"role":"user","content":"hi"}}"#;
/// assert_eq!(LaidOut::of(line).role(), laid_out_role(line));
/// assert_eq!(LaidOut::of(br#"{"type":"message", "message":{"role":"user"}}"#).role(), None);
/// ```
#[derive(Clone)]
pub struct LaidOut<'l> {
    line: &'l [u8],
    /// Its members before the message, `None` for a line laid out otherwise (walked whole) or
    /// whose message was found by the open's scan (`proven`).
    head: Option<LaidHead<'l>>,
    /// Where the open's scan found the line's message and id ([`LaidOut::proven`]).
    proven: Option<MessageAt>,
}

impl std::fmt::Debug for LaidOut<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaidOut")
            .field("message_at", &self.head.as_ref().map(|head| head.message))
            .finish()
    }
}

impl<'l> LaidOut<'l> {
    /// `line`, its members before its message found when it is laid out so.
    pub fn of(line: &'l [u8]) -> Self {
        LaidOut {
            line,
            head: laid_out_head(line),
            proven: None,
        }
    }

    /// `line`, the line of a `message` entry whose one top-level `message` and whose id the
    /// open's scan found at `at` ([`Scanned::message_at`]): nothing around the message is read
    /// again. The readers of its message's keys ([`canonical_keyed_message_laid`]) take the
    /// line as the entry's when it still starts as scanned and holds the entry's id there
    /// ([`MessageAt::holds`]): say so only of a line the open's scan read so, as the store
    /// tells it (`SessionFile::message_at`).
    ///
    /// ```
    /// use pi_session_types::envelope_scan::scan_envelope;
    /// use pi_session_types::shallow::LaidOut;
    /// let line = br#"{"type":"message","id":"a","message":{"role":"user","content":"hi"}}"#;
    /// let at = scan_envelope(line).unwrap().message_at.unwrap();
    /// assert_eq!(LaidOut::proven(line, at).role(), LaidOut::of(line).role());
    /// ```
    ///
    /// [`Scanned::message_at`]: crate::envelope_scan::Scanned::message_at
    pub fn proven(line: &'l [u8], at: MessageAt) -> Self {
        LaidOut {
            line,
            head: None,
            proven: Some(at),
        }
    }

    /// The line.
    pub fn line(&self) -> &'l [u8] {
        self.line
    }

    /// [`laid_out_role`] of the line.
    pub fn role(&self) -> Option<&'l [u8]> {
        let line = self.line;
        let start = match (self.proven, &self.head) {
            (Some(at), _) => at.message(),
            (None, Some(head)) => head.message,
            (None, None) => return None,
        };
        if line.get(start) != Some(&b'{') {
            return None;
        }
        let (role, value) = plain_key(line, start + 1)?;
        if role != key::ROLE.as_bytes() {
            return None;
        }
        let (end, escaped) = value_end(line, value)?;
        match (escaped, line.get(value)) {
            (false, Some(b'"')) => line.get(value + 1..end - 1),
            _ => None,
        }
    }
}

/// The key of the member that starts at `at` (its opening quote) when it holds no escape,
/// and the offset of its value (past the colon, which must follow the key).
#[inline(always)]
fn plain_key(line: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let (end, escaped) = string_end(line, at)?;
    let name = line.get(at + 1..end - 1)?;
    (!escaped && line.get(end) == Some(&b':')).then_some((name, end + 1))
}

/// Past the value that starts at `at` (nothing checked, see [`json::skip_value`]), and
/// whether it is a string holding an escape; `None` where no value starts.
#[inline(always)]
fn value_end(line: &[u8], at: usize) -> Option<(usize, bool)> {
    if line.get(at) == Some(&b'"') {
        return string_end(line, at);
    }
    json::skip_value(line, at)
        .filter(|&end| end > at)
        .map(|end| (end, false))
}

/// Past the string whose opening quote is at `at`, and whether it holds an escape: a short
/// plain one told from one chunk, a longer one skipped 16 bytes at a time up to its first
/// quote, backslash, control or non-ASCII byte (as the open's scan reads them), anything
/// else searched for its closing quote.
#[inline(always)]
fn string_end(line: &[u8], at: usize) -> Option<(usize, bool)> {
    use crate::envelope_scan::{short_plain_end, skip_plain};
    if line.get(at) != Some(&b'"') {
        return None;
    }
    let stop = match short_plain_end(line, at + 1) {
        Ok(quote) => return Some((quote + 1, false)),
        Err(from) => skip_plain(line, from),
    };
    if line.get(stop) == Some(&b'"') {
        return Some((stop + 1, false));
    }
    // The bytes before `stop` are plain: the search and the look for a backslash go on from it.
    let end = json::skip_string_from(line, at, stop)?;
    Some((end, line[stop..end].contains(&b'\\')))
}

/// One value of a canonical line, exactly its bytes (`escaped`: a string holding an escape):
/// a string without one taken as it is, anything else as [`value_of`] reads it.
fn canonical_value(value: &[u8], escaped: bool) -> Option<Value> {
    match unescaped_text(value, escaped) {
        // A canonical string holds no control character but through an escape.
        Some(text) => std::str::from_utf8(text)
            .ok()
            .map(|text| Value::String(text.to_owned())),
        None => value_of(value),
    }
}

/// The text of a canonical line's string value `value` (`escaped`: it holds an escape, as the
/// walk saw it) when it holds no escape: its bytes between the quotes are the string.
fn unescaped_text(value: &[u8], escaped: bool) -> Option<&[u8]> {
    match value {
        [b'"', text @ .., b'"'] if !escaped => Some(text),
        _ => None,
    }
}

/// `key`, then `keys`: a list of keys one longer than another, made at compile time (`M` must
/// be `N + 1`; any other length does not compile).
///
/// ```
/// use pi_session_types::shallow::with_key;
/// const FEW: [&str; 2] = ["role", "usage"];
/// const MORE: [&str; 3] = with_key("timestamp", FEW);
/// assert_eq!(MORE, ["timestamp", "role", "usage"]);
/// ```
pub const fn with_key<const N: usize, const M: usize>(
    key: &'static str,
    keys: [&'static str; N],
) -> [&'static str; M] {
    assert!(M == N + 1, "a list one key longer");
    let mut out = [key; M];
    let mut i = 0;
    while i < N {
        out[i + 1] = keys[i];
        i += 1;
    }
    out
}

/// The kept keys of a `message` entry's message ([`Keys::message`]) as
/// [`canonical_keyed_message`] reads them: each key with its value, in the line's order, in a
/// list instead of a map (no key hashed or copied: a rule that reads two or three of them
/// finds them by a look down a list of as many). A `content` array read cut down to
/// [`Keys::blocks`] is held as its blocks' lists of those keys ([`Self::blocks`]), not as a
/// value.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyedMessage {
    members: Vec<(&'static str, Value)>,
    /// The content's items when it was read cut to the blocks' keys (its place in `members`
    /// then holds a `null`, never handed out).
    blocks: Option<Vec<value_read::Element>>,
}

impl KeyedMessage {
    /// The value of `key`, when the message holds it and it is among the keys read; `None` for
    /// a `content` read as its blocks ([`Self::blocks`]).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.members()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| value)
    }

    /// The keys read and their values, in the line's order (a `content` read as its blocks
    /// left out: [`Self::blocks`]).
    pub fn members(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        let cut = self.blocks.is_some();
        self.members
            .iter()
            .filter(move |(name, _)| !(cut && *name == key::CONTENT))
            .map(|(name, value)| (*name, value))
    }

    /// The items of a `content` array read cut down to the blocks' keys ([`Keys::blocks`]):
    /// each object as the list of those of its members it holds.
    pub fn blocks(&self) -> Option<&[value_read::Element]> {
        self.blocks.as_deref()
    }

    /// The keys read, as an object of them in the line's order (for a rule that takes a
    /// message as a value: it sees what a message read as those keys holds).
    pub fn to_value(&self) -> Value {
        Value::Object(
            self.members
                .iter()
                .map(|(name, value)| {
                    let value = match &self.blocks {
                        Some(blocks) if *name == key::CONTENT => {
                            Listed::Array(blocks.clone()).into_value()
                        }
                        _ => value.clone(),
                    };
                    ((*name).to_owned(), value)
                })
                .collect(),
        )
    }
}

/// A content block as a rule that reads a few of its keys sees it: an object of the message's
/// value, or the list of its kept members ([`KeyedMessage::blocks`]).
#[derive(Debug, Clone, Copy)]
pub enum SeenBlock<'a> {
    /// An object of a message read as a value.
    Map(&'a Map<String, Value>),
    /// The kept members of a block read from its line.
    Listed(&'a [(std::borrow::Cow<'static, str>, value_read::Field)]),
}

impl<'a> SeenBlock<'a> {
    /// `key` when it is a string.
    pub fn str(self, key: &str) -> Option<&'a str> {
        match self {
            Self::Map(map) => map.get(key).and_then(Value::as_str),
            Self::Listed(members) => listed_member(members, key)
                .and_then(value_read::Field::as_text)
                .map(|text| text.as_str()),
        }
    }

    /// `key`'s `SameValueZero` key ([`SameValueKey::of`]) as JavaScript's `Set` of it holds it.
    ///
    /// [`SameValueKey::of`]: crate::js::SameValueKey::of
    pub fn same_value_key(self, key: &str) -> crate::js::SameValueKey {
        use crate::js::SameValueKey;
        match self {
            Self::Map(map) => SameValueKey::of(map.get(key)),
            Self::Listed(members) => match listed_member(members, key) {
                Some(value_read::Field::Text(text)) => SameValueKey::String(text.as_str().into()),
                Some(value_read::Field::Other(value)) => SameValueKey::of(Some(value)),
                None => SameValueKey::Undefined,
            },
        }
    }
}

/// The value of `key` among a block's listed members: the last one written, as a map holds it.
fn listed_member<'a>(
    members: &'a [(std::borrow::Cow<'static, str>, value_read::Field)],
    key: &str,
) -> Option<&'a value_read::Field> {
    members
        .iter()
        .rev()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value)
}

/// A message as a rule that reads a few of its keys sees it: its value, or the keys read of
/// its line ([`KeyedMessage`]). A rule asked of either answers the same, so long as the keys
/// it reads are among those read.
///
/// ```
/// use pi_session_types::shallow::{Keys, Seen, canonical_keyed_message};
/// use serde_json::json;
/// let keys = Keys { entry: &["type", "id", "message"], message: &["role"], blocks: &[] };
/// let line = br#"{"type":"message","id":"a","message":{"role":"user","content":"hi"}}"#;
/// let (keyed, _) = canonical_keyed_message(line, &keys, "a").unwrap();
/// let value = json!({"role": "user", "content": "hi"});
/// assert_eq!(Seen::Keyed(&keyed).str("role"), Seen::Value(&value).str("role"));
/// assert_eq!(*Seen::Keyed(&keyed).to_value(), json!({"role": "user"}));
/// ```
#[derive(Debug, Clone, Copy)]
pub enum Seen<'a> {
    /// The message read as a value (whole, or a few keys of it).
    Value(&'a Value),
    /// The keys of it read from its line.
    Keyed(&'a KeyedMessage),
}

impl<'a> Seen<'a> {
    /// The value of `key`, when the message holds it (and, read as keys, it is among them).
    pub fn get(self, key: &str) -> Option<&'a Value> {
        match self {
            Self::Value(message) => message.get(key),
            Self::Keyed(message) => message.get(key),
        }
    }

    /// [`Self::get`] when it is a string.
    pub fn str(self, key: &str) -> Option<&'a str> {
        self.get(key).and_then(Value::as_str)
    }

    /// The blocks of its `content` that are objects, in order: of its value, or as read from
    /// its line ([`KeyedMessage::blocks`]). None when the content is not an array.
    pub fn blocks(self) -> impl Iterator<Item = SeenBlock<'a>> {
        let (maps, listed) = match self {
            Self::Keyed(message) if message.blocks.is_some() => (None, message.blocks()),
            _ => (self.get(key::CONTENT).and_then(Value::as_array), None),
        };
        let maps = maps
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
            .map(SeenBlock::Map);
        let listed = listed.into_iter().flatten().filter_map(|item| match item {
            value_read::Element::Object(members) => Some(SeenBlock::Listed(members)),
            value_read::Element::Other(_) => None,
        });
        maps.chain(listed)
    }

    /// The message as a value: its own, or the keys read made into one
    /// ([`KeyedMessage::to_value`]).
    pub fn to_value(self) -> std::borrow::Cow<'a, Value> {
        match self {
            Self::Value(message) => std::borrow::Cow::Borrowed(message),
            Self::Keyed(message) => std::borrow::Cow::Owned(message.to_value()),
        }
    }
}

/// The line of the `message` entry with id `id` (as the store indexed it), its message spelled
/// as `JSON.stringify` spells it ([`json::is_js_canonical`]; the line around it read as
/// [`canonical_entry_with_message_keys`] reads it), read as the keys `keys.message` of its
/// message ([`KeyedMessage`]) and the bytes of that message; no map built. The entry's own
/// keys are only checked: `type` must be `"message"` and `id` must be `id` as written (no
/// escape); other keys `keys.entry` names (omp's `timestamp`) are not read, so a caller reads
/// a line so only where no rule reads them (the messages after a branch's last entry of
/// another type). `None` for anything else: a message that is not canonical, a line that
/// names another type or id (or spells it with an escape), has no message object, or that
/// [`canonical_entry_with_message_keys`] refuses; a caller then reads it that way or whole.
///
/// ```
/// use pi_session_types::shallow::{Keys, canonical_keyed_message};
/// use serde_json::json;
/// let line = br#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"long"}}"#;
/// let keys = Keys { entry: &["type", "id", "message"], message: &["role", "provider"], blocks: &[] };
/// let (message, bytes) = canonical_keyed_message(line, &keys, "a").unwrap();
/// assert_eq!(message.get("role"), Some(&json!("user")));
/// assert_eq!(message.get("provider"), None);
/// assert_eq!(bytes, br#"{"role":"user","content":"long"}"#);
/// assert_eq!(canonical_keyed_message(line, &keys, "b"), None);
/// // An entry key besides those is not read.
/// let dated = Keys { entry: &["type", "id", "timestamp", "message"], ..keys };
/// assert_eq!(canonical_keyed_message(line, &dated, "a").map(|(m, _)| m), Some(message));
/// ```
pub fn canonical_keyed_message<'l>(
    line: &'l [u8],
    keys: &Keys,
    id: &str,
) -> Option<(KeyedMessage, &'l [u8])> {
    canonical_keyed_message_given(line, Strings::Unknown, keys, id)
}

/// [`canonical_keyed_message`] of a line whose strings are known to be spelled as
/// `JSON.stringify` spells them when `strings` says so ([`json::Strings`]): the message's
/// strings are stepped over by their quotes, not read.
pub fn canonical_keyed_message_given<'l>(
    line: &'l [u8],
    strings: Strings,
    keys: &Keys,
    id: &str,
) -> Option<(KeyedMessage, &'l [u8])> {
    canonical_keyed_message_laid(&LaidOut::of(line), strings, keys, id)
}

/// [`canonical_keyed_message_given`] of a line whose layout a caller found first
/// ([`LaidOut::of`]), or whose message the open's scan found ([`LaidOut::proven`]: its type and
/// id are then taken as `message` and `id`, not read).
pub fn canonical_keyed_message_laid<'l>(
    laid: &LaidOut<'l>,
    strings: Strings,
    keys: &Keys,
    id: &str,
) -> Option<(KeyedMessage, &'l [u8])> {
    // A canonical object holds no key twice: each member below is seen once at most.
    struct Read {
        members: Vec<(&'static str, Value)>,
        blocks: Option<Vec<value_read::Element>>,
        kind: bool,
        named: bool,
    }
    // A line whose message the open's scan found is the entry's while it starts as scanned
    // and holds the entry's id where the scan found it: its members are not read again.
    let proven = match laid.proven {
        Some(at) if !at.holds(laid.line, id) => return None,
        proven => proven.is_some(),
    };
    let mut read = Read {
        members: KEPT_MEMBERS.with(Cell::take),
        blocks: None,
        kind: proven,
        named: proven,
    };
    let message = canonical_message_members(
        laid,
        strings,
        keys,
        &mut read,
        |read, name, value, escaped| {
            // Equal bytes between the quotes are an equal string when they hold no escape.
            if name == key::TYPE.as_bytes() {
                read.kind = unescaped_text(value, escaped) == Some(b"message".as_slice());
            } else if name == key::ID.as_bytes() {
                read.named = unescaped_text(value, escaped) == Some(id.as_bytes());
            }
            true
        },
        |read, name, value| match value {
            Kept::Value(value) => read.members.push((name, value)),
            Kept::Blocks(blocks) => {
                // In its place, never read: the blocks stand for it.
                read.members.push((name, Value::Null));
                read.blocks = Some(blocks);
            }
        },
    );
    // Gathered in the thread's list, then made exactly as large as the members it holds (most
    // messages hold one to four of ten keys): a message lives until it is sent, and room for
    // the other keys would take a page of memory every few messages read. One allocation,
    // where a list made as large as the keys it may hold and then cut took two.
    let members: Vec<_> = read.members.drain(..).collect();
    KEPT_MEMBERS.with(|kept| kept.set(read.members));
    (read.kind && read.named).then_some((
        KeyedMessage {
            members,
            blocks: read.blocks,
        },
        message?,
    ))
}

thread_local! {
    /// The list [`canonical_keyed_message_laid`] gathers a message's members in, kept between
    /// the calls of a thread (emptied each time).
    static KEPT_MEMBERS: Cell<Vec<(&'static str, Value)>> = const { Cell::new(Vec::new()) };
}

/// The text between the quotes of a string value as written, when it holds no escape.
fn quoted(value: &[u8]) -> Option<&[u8]> {
    unescaped_text(value, value.contains(&b'\\'))
}

/// The members named in `kept` of the object that starts `bytes` as a JSON object, each value
/// read where it is by `read` (given the bytes from the value on, it gives the value and its
/// length), and the object's length; `None` when no object starts `bytes`, a key is spelled
/// with an escape, a kept key appears twice or `read` refuses a value.
fn members<'l>(
    bytes: &'l [u8],
    kept: &[&'static str],
    read: impl FnMut(&'static str, &'l [u8]) -> Option<(Value, usize)>,
) -> Option<(Value, usize)> {
    // Gathered first, so that the map is made as large as it needs to be.
    let (found, len) = member_list(bytes, kept, read)?;
    Some((object_of(found), len))
}

/// [`members`] as a list of the members found (no key twice), in the line's order: no map.
fn member_list<'l, V>(
    bytes: &'l [u8],
    kept: &[&'static str],
    mut read: impl FnMut(&'static str, &'l [u8]) -> Option<(V, usize)>,
) -> Option<(Vec<(&'static str, V)>, usize)> {
    let mut found: Vec<(&'static str, V)> = Vec::with_capacity(kept.len());
    let mut refused = false;
    let len = json::read_members(bytes, |name, rest| {
        if refused || name.contains(&b'\\') {
            refused = true;
            return json::value_len(rest);
        }
        let Some(&name) = kept.iter().find(|k| k.as_bytes() == name) else {
            return json::value_len(rest);
        };
        match read(name, rest) {
            Some((value, len)) if found.iter().all(|(seen, _)| *seen != name) => {
                found.push((name, value));
                Some(len)
            }
            _ => {
                refused = true;
                json::value_len(rest)
            }
        }
    })?;
    if refused {
        return None;
    }
    Some((found, len))
}

/// The members `found` (no key twice) as a JSON object, in that order.
fn object_of(found: Vec<(&'static str, Value)>) -> Value {
    // Made as large as it needs to be (most messages hold one of the keys a rule reads).
    let mut map = Map::with_capacity(found.len());
    for (name, value) in found {
        map.insert(name.to_owned(), value);
    }
    Value::Object(map)
}

/// The member `name` of a message, read from `rest` (the bytes from its value on): its
/// `content` cut down to `keys.blocks` ([`Keys::blocks`]), any other value whole; with the
/// value's length.
fn member_of(keys: &Keys, name: &str, rest: &[u8]) -> Option<(Value, usize)> {
    if name != key::CONTENT || keys.blocks.is_empty() {
        return value_at(rest);
    }
    // Read in one walk where the list-making reader reads it: the same answer (`shallow`'s
    // property test holds the two to it), without stepping over each block before reading it.
    if let Some((listed, len)) = value_read::read_listed_keeping(rest, keys.blocks) {
        return Some((listed.into_value(), len));
    }
    blocks_walked(keys.blocks, rest)
}

/// A message's `content` (`rest`: the bytes from its value on) cut down to `blocks`, walked
/// block by block: the array's items found first (`json::for_each_element`), then each
/// object's kept members read; any other value whole. With the value's length.
fn blocks_walked(blocks: &'static [&'static str], rest: &[u8]) -> Option<(Value, usize)> {
    let len = json::value_len(rest)?;
    let value = &rest[..len];
    let mut read_blocks = Vec::new();
    let mut refused = false;
    let array = json::for_each_element(value, |item| {
        if refused {
            return;
        }
        let block = if item.starts_with(b"{") {
            members(item, blocks, |_, rest| value_at(rest))
                .filter(|&(_, read)| read == item.len())
                .map(|(block, _)| block)
        } else {
            value_of(item)
        };
        match block {
            Some(block) => read_blocks.push(block),
            None => refused = true,
        }
    });
    let read = match array {
        Some(()) if !refused => Some(Value::Array(read_blocks)),
        Some(()) => None,
        None => value_of(value),
    };
    read.map(|read| (read, len))
}

/// The value that starts `rest` as `serde_json::from_slice` reads it, and its length: an
/// object, an array or a string read where it is ([`value_read::read_value`]: the read ends
/// where the value does; `serde_json`'s parse where that one leaves it), anything else measured
/// first ([`value_of`]).
fn value_at(rest: &[u8]) -> Option<(Value, usize)> {
    if let Some(b'{' | b'[' | b'"') = rest.first()
        && let Some(read) = value_read::read_value(rest)
    {
        return Some(read);
    }
    if let Some(b'{' | b'[') = rest.first() {
        let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
        let value = values.next()?.ok()?;
        return Some((value, values.byte_offset()));
    }
    let len = json::value_len(rest)?;
    value_of(&rest[..len]).map(|value| (value, len))
}

/// One value as `serde_json::from_slice` reads it; a string without escapes or control
/// characters (an id, a role) is taken as it is.
fn value_of(bytes: &[u8]) -> Option<Value> {
    if let Some(inner) = quoted(bytes)
        && !inner.iter().any(|&c| c < 0x20)
    {
        return std::str::from_utf8(inner)
            .ok()
            .map(|text| Value::String(text.to_owned()));
    }
    value_read::from_slice(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::{
        Keys, ListedEntry, canonical_entry_with_message_keys, canonical_keyed_message,
        entry_with_message_keys, listed_entry_with_message_keys,
        listed_entry_with_message_keys_given, value_of,
    };
    use serde_json::{Value, json};

    const KEYS: Keys = Keys {
        entry: &["type", "id", "message", "extra"],
        message: &["role", "provider", "model"],
        blocks: &[],
    };

    #[test]
    fn keeps_the_named_keys_of_the_entry_and_of_its_message() {
        let line = br#"{"type":"message","id":"a\u0062","parentId":null,"message":{"role":"assistant","content":[{"type":"text","text":"x\ny"}],"provider":"p","model":"m","usage":{"input":1}},"extra":[1,2.5,"z\n\u00e9"]}"#;
        let (shallow, message) = entry_with_message_keys(line, &KEYS).unwrap();
        let mut full: Value = serde_json::from_slice(line).unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(message).unwrap(),
            full["message"]
        );
        full["message"] = json!({"role":"assistant","provider":"p","model":"m"});
        full.as_object_mut().unwrap().shift_remove("parentId");
        assert_eq!(shallow, full);
    }

    #[test]
    fn a_canonical_line_reads_as_in_two_passes() {
        let line = br#"{"type":"message","id":"ab","parentId":null,"message":{"role":"assistant","content":[{"type":"text","text":"x\ny"}],"provider":"p","model":"m","usage":{"input":1}},"extra":[1,2.5,"z\n\u0001"]}"#;
        let read = canonical_entry_with_message_keys(line, &KEYS);
        assert!(read.is_some());
        assert_eq!(read, entry_with_message_keys(line, &KEYS));
        // Members spelled otherwise around a canonical message: read as the message's
        // spelling is all that is taken as written.
        for around in [
            &br#"{"type":"message","id":"a\u0062","message":{"role":"user"}}"#[..],
            br#"{"type":"message","message":{"role":"user"},"0":1}"#,
            br#"{"type":"message","message":{"role":"user"},"n":1.0}"#,
        ] {
            let read = canonical_entry_with_message_keys(around, &KEYS);
            assert!(read.is_some(), "{around:?}");
            assert_eq!(read, entry_with_message_keys(around, &KEYS), "{around:?}");
        }
        // Laid out otherwise (walked whole, then), or holding a message spelled otherwise.
        for other in [
            &br#"{"type":"message", "message":{"role":"user"}}"#[..],
            br#"{"type":"message","message":{"role":"user","n":1.0}}"#,
        ] {
            assert_eq!(
                canonical_entry_with_message_keys(other, &KEYS),
                None,
                "{other:?}"
            );
            assert!(entry_with_message_keys(other, &KEYS).is_some(), "{other:?}");
        }
    }

    /// The listed reading (no map) reads what the map reading reads, and refuses what it
    /// refuses.
    #[test]
    fn a_listed_entry_is_the_entry_read_as_a_map() {
        const LISTED: Keys = Keys {
            entry: &["type", "id", "message"],
            message: &["role", "content", "toolCallId"],
            blocks: &[],
        };
        let lines: &[&[u8]] = &[
            br#"{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","text":"x\ny","type":"image"},"s",1.5e3,[{"deep":[{}]}],null],"usage":{"input":1}},"parentId":null}"#,
            br#"{"type":"message","id":"a","message":{"content":"plain","role":"user","toolCallId":null}}"#,
            br#" {"message":{"content":{"an":"object"}},"id":7} "#,
            br#"{"type":"message","message":{"role":"user","content":[{"t\u0065xt":"escaped key"}]}}"#,
            br#"{"type":"message","message":{"role":"user","content":["\ud800"]}}"#,
            br#"{"type":"message","message":{"role":"user","content":[1,]}}"#,
            br#"{"type":"message","message":{"role":"user","content":[],"content":[]}}"#,
            br#"{"type":"message","message":{"r\u006fle":"user","content":[]}}"#,
            br#"{"type":"message","message":[]}"#,
            br#"{"type":"message","message":{"content":[]}} x"#,
            br#"{"type":"message"}"#,
        ];
        let deep = format!(
            r#"{{"message":{{"content":{}{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let cut = Keys {
            blocks: &["type", "deep"],
            ..LISTED
        };
        for keys in [LISTED, cut] {
            for line in lines.iter().copied().chain([deep.as_bytes()]) {
                let listed = listed_entry_with_message_keys(line, &keys)
                    .map(|(listed, message)| (listed.into_value(), message));
                assert_eq!(
                    listed,
                    entry_with_message_keys(line, &keys),
                    "{}",
                    String::from_utf8_lossy(line)
                );
            }
        }
        // A kept key written twice in a block: refused, as the map's reader refuses it.
        assert_eq!(listed_entry_with_message_keys(lines[0], &cut), None);
    }

    /// A `message` line made of the pieces a reader of members could trip over: blocks with
    /// keys written twice or spelled with escapes, values of every kind, texts with escapes at
    /// a chunk's edge, and a byte spliced in anywhere.
    fn message_line() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        (content(), any::<Option<(prop::sample::Index, u8)>>()).prop_map(|(content, splice)| {
            let line = format!(
                r#"{{"type":"message","id":"a","message":{{"role":"user","content":{content},"usage":{{"n":1}}}}}}"#
            );
            spliced(line.into_bytes(), splice)
        })
    }

    /// `bytes` with `byte` inserted at `at` (one place in `bytes.len() + 1`), when given.
    fn spliced(mut bytes: Vec<u8>, splice: Option<(proptest::sample::Index, u8)>) -> Vec<u8> {
        if let Some((at, byte)) = splice {
            let at = at.index(bytes.len() + 1);
            bytes.insert(at, byte);
        }
        bytes
    }

    /// A message's `content` as [`message_line`] makes it: an array of blocks and values, or a
    /// text.
    fn content() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let text = prop::collection::vec(
            prop_oneof![
                Just("a"),
                Just("0123456789abcdef"),
                Just("\\n"),
                Just("\\\""),
                Just("\\u00e9"),
                Just("\\ud83d\\ude00"),
                Just("\\ud83d"),
                Just("é"),
            ],
            0..8,
        )
        .prop_map(|pieces| format!("\"{}\"", pieces.concat()));
        let key = prop_oneof![
            Just("\"type\""),
            Just("\"text\""),
            Just("\"t\\u0065xt\""),
            Just("\"id\""),
            Just("\"data\""),
        ];
        let value = prop_oneof![
            text.clone(),
            Just("\"text\"".to_owned()),
            Just("1.5e3".to_owned()),
            Just("null".to_owned()),
            Just("[{\"a\":[]}]".to_owned()),
        ];
        let block = prop::collection::vec((key, value.clone()), 0..4).prop_map(|members| {
            let members: Vec<String> = members.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!("{{{}}}", members.join(","))
        });
        let item = prop_oneof![block, value];
        prop_oneof![
            prop::collection::vec(item, 0..5).prop_map(|items| format!("[{}]", items.join(","))),
            text,
        ]
    }

    proptest::proptest! {
        /// The role a line's layout tells is the role its parse reads, whatever byte is
        /// spliced into it (a line whose message gives `role` twice aside: the parse keeps the
        /// last).
        #[test]
        fn a_laid_out_role_is_the_parsed_role(line in message_line()) {
            if let (Some(role), Ok(value)) =
                (super::laid_out_role(&line), serde_json::from_slice::<Value>(&line))
            {
                let once = line.windows(6).filter(|w| w == br#""role""#).count() == 1;
                if once {
                    proptest::prop_assert_eq!(
                        value["message"]["role"].as_str().map(str::as_bytes),
                        Some(role),
                        "{}", String::from_utf8_lossy(&line)
                    );
                }
            }
        }

        #[test]
        fn a_made_line_reads_listed_as_it_reads_as_a_map(line in message_line()) {
            const LISTED: Keys = Keys {
                entry: &["type", "id", "message"],
                message: &["role", "content"],
                blocks: &[],
            };
            // The blocks cut to a few keys: the others stepped over.
            const CUT: Keys = Keys {
                blocks: &["type", "text"],
                ..LISTED
            };
            // What the open's scan proves of the line: a proven line reads the same with its
            // texts found by their quotes.
            let proven = crate::envelope_scan::scan_envelope(&line)
                .is_some_and(|scanned| scanned.stringify_spelled);
            for keys in [LISTED, CUT] {
                let read = listed_entry_with_message_keys(&line, &keys);
                if proven {
                    let given = listed_entry_with_message_keys_given(
                        &line,
                        crate::json::Strings::Stringified,
                        &keys,
                    );
                    proptest::prop_assert_eq!(&given, &read);
                    // The texts as they decode, not only their spellings.
                    let decoded = |read: Option<(ListedEntry, &[u8])>| {
                        read.map(|(listed, message)| (listed.into_value(), message.to_vec()))
                    };
                    proptest::prop_assert_eq!(decoded(given), decoded(read.clone()));
                }
                let listed = read.map(|(listed, message)| (listed.into_value(), message));
                proptest::prop_assert_eq!(listed, entry_with_message_keys(&line, &keys));
            }
        }

        /// Both readers cut blocks through `read_listed_keeping` where it answers: on JSON
        /// (what the store checked every line to be), its answer is the block-by-block walk's,
        /// refusals included. (On bytes that are not JSON the two step over unread values
        /// differently; the walk around the value refuses such a line either way.)
        #[test]
        fn a_cut_content_reads_in_one_walk_as_block_by_block(
            content in content(),
            splice in proptest::prelude::any::<Option<(proptest::sample::Index, u8)>>(),
        ) {
            const BLOCKS: &[&str] = &["type", "text"];
            let mut bytes = spliced(content.into_bytes(), splice);
            let start = crate::json::skip_whitespace(&bytes, 0);
            bytes.drain(..start);
            if serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_ok() {
                // As the readers hand it over: from the value's first byte, the line going on.
                bytes.push(b',');
                let one_walk = crate::value_read::read_listed_keeping(&bytes, BLOCKS)
                    .map(|(listed, len)| (listed.into_value(), len));
                proptest::prop_assert_eq!(one_walk, super::blocks_walked(BLOCKS, &bytes));
            }
        }
    }

    #[test]
    fn strings_read_as_serde_json_reads_them() {
        for text in [
            r#""plain""#,
            r#""caf\u00e9""#,
            r#""a\"b""#,
            "\"caf\u{e9}\"",
            r#""""#,
        ] {
            assert_eq!(
                value_of(text.as_bytes()),
                serde_json::from_str::<Value>(text).ok(),
                "{text}"
            );
        }
        for refused in [&b"\"tab\there\""[..], b"\"\xff\"", br#""\ud800""#] {
            assert_eq!(value_of(refused), None, "{refused:?}");
        }
    }

    #[test]
    fn refuses_what_is_not_an_entry_with_a_message_object() {
        for line in [
            &br#"[1]"#[..],
            br#"{"type":"label"}"#,
            br#"{"message":"text"}"#,
            br#"{"message":[]}"#,
            br#"{"message":{"role":"user"}} x"#,
            b"\x0c{\"message\":{\"role\":\"user\"}}",
            br#"{"message":{"role":"user""#,
            br#"{"message":{"r\u006fle":"user"}}"#,
            br#"{"mess\u0061ge":{"role":"user"}}"#,
            br#"{"message":{"role":"\ud800"}}"#,
            br#"{"id":"a","message":{"role":"user"},"id":"b"}"#,
            br#"{"message":{"role":"user","role":"assistant"}}"#,
            br#"{"message":{"role":"user"},"message":{"role":"user"}}"#,
        ] {
            assert_eq!(entry_with_message_keys(line, &KEYS), None, "{line:?}");
            assert_eq!(
                canonical_entry_with_message_keys(line, &KEYS),
                None,
                "{line:?}"
            );
        }
    }

    /// Read as its message's keys only when the line is the entry the index names (its type
    /// and id, as written) and its message is spelled as `JSON.stringify` spells it; those keys
    /// are the message's in the canonical cut.
    #[test]
    fn a_message_is_read_as_its_keys_only_for_the_entry_indexed() {
        const KEYS: Keys = Keys {
            entry: &["type", "id", "message"],
            ..super::tests::KEYS
        };
        let line = br#"{"type":"message","id":"a","parentId":null,"message":{"role":"assistant","content":[],"provider":"p","model":{"m":1}},"extra":[]}"#;
        let (keyed, message) = canonical_keyed_message(line, &KEYS, "a").unwrap();
        let (cut, bytes) = canonical_entry_with_message_keys(line, &KEYS).unwrap();
        assert_eq!(message, bytes);
        let members: serde_json::Map<String, Value> = keyed
            .members()
            .map(|(k, v)| (k.to_owned(), v.clone()))
            .collect();
        assert_eq!(Value::Object(members), cut["message"]);
        assert_eq!(keyed.get("model"), Some(&json!({"m":1})));
        for (other, id) in [
            (&line[..], "b"),
            (
                br#"{"type":"label","id":"a","message":{"role":"user"}}"#,
                "a",
            ),
            (
                br#"{"type":"message","id":"\u0061","message":{"role":"user"}}"#,
                "a",
            ),
            (br#"{"type":"message","message":{"role":"user"}}"#, "a"),
            (br#"{"type":"message","id":"a","message":"text"}"#, "a"),
            (
                br#"{"type":"message", "id":"a","message":{"role":"user"}}"#,
                "a",
            ),
            (
                br#"{"type":"message","id":"a","message":{"r\u006fle":"user"}}"#,
                "a",
            ),
        ] {
            assert_eq!(canonical_keyed_message(other, &KEYS, id), None, "{other:?}");
        }
        // A member after the message spelled otherwise: the message is read all the same.
        let around = br#"{"type":"message","id":"a","message":{"role":"user"},"n":1.0}"#;
        let (keyed, message) = canonical_keyed_message(around, &KEYS, "a").unwrap();
        assert_eq!(
            (keyed.get("role"), message),
            (Some(&json!("user")), &br#"{"role":"user"}"#[..])
        );
        // Entry keys besides `type`, `id` and `message` are not read: the message's keys are
        // those read with the smaller list.
        assert_eq!(
            canonical_keyed_message(line, &super::tests::KEYS, "a").map(|(message, _)| message),
            canonical_keyed_message(line, &KEYS, "a").map(|(message, _)| message)
        );
    }

    #[test]
    fn cuts_the_content_blocks_to_their_keys() {
        const BLOCKS: Keys = Keys {
            entry: &["type", "message"],
            message: &["role", "content"],
            blocks: &["type", "id"],
        };
        let line = br#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"long"},"odd",{"type":"toolCall","id":"c1","arguments":{"path":"a"}}],"usage":{}}}"#;
        let expected = json!({"type":"message","message":{"role":"assistant","content":[{"type":"text"},"odd",{"type":"toolCall","id":"c1"}]}});
        let read = entry_with_message_keys(line, &BLOCKS).unwrap();
        assert_eq!(read.0, expected);
        assert_eq!(canonical_entry_with_message_keys(line, &BLOCKS), Some(read));
        // A content that is not an array is read whole.
        let text = br#"{"type":"message","message":{"role":"user","content":"hi"}}"#;
        assert_eq!(
            entry_with_message_keys(text, &BLOCKS).unwrap().0,
            json!({"type":"message","message":{"role":"user","content":"hi"}})
        );
        // A block's key spelled with an escape could spell a kept one.
        let escaped =
            br#"{"type":"message","message":{"role":"user","content":[{"\u0069d":"x"}]}}"#;
        assert_eq!(entry_with_message_keys(escaped, &BLOCKS), None);
    }

    /// A rule that reads a turn's calls sees the same blocks in a message read as keys (its
    /// blocks listed, no map made) as in its value.
    #[test]
    fn a_keyed_message_shows_its_blocks_as_its_value_does() {
        use super::{Seen, canonical_keyed_message};
        const KEYS: Keys = Keys {
            entry: &["type", "id", "message"],
            message: &["role", "content"],
            blocks: &["type", "id"],
        };
        let line = br#"{"type":"message","id":"m","message":{"role":"assistant","content":[{"type":"text","text":"t"},"odd",{"type":"toolCall","id":"c\n1"},{"type":"toolCall","id":7},{"type":"toolCall","id":{"o":1}},{"type":"toolCall"},{"type":"toolCall","id":"c2"}]}}"#;
        let (keyed, message) = canonical_keyed_message(line, &KEYS, "m").unwrap();
        assert_eq!(keyed.blocks().map(<[_]>::len), Some(7));
        assert_eq!(keyed.get("content"), None);
        let value: Value = serde_json::from_slice(message).unwrap();
        let seen = |message: Seen<'_>| -> Vec<_> {
            message
                .blocks()
                .map(|block| {
                    (
                        block.str("type").map(str::to_owned),
                        block.same_value_key("id"),
                    )
                })
                .collect()
        };
        let (by_keys, by_value) = (seen(Seen::Keyed(&keyed)), seen(Seen::Value(&value)));
        assert_eq!(by_keys.len(), 6);
        // Objects are keyed by identity: each its own, in either reading.
        use crate::js::SameValueKey::Reference;
        for (keys, value) in by_keys.iter().zip(&by_value) {
            match (&keys.1, &value.1) {
                (Reference(_), Reference(_)) => assert_eq!(keys.0, value.0),
                _ => assert_eq!(keys, value),
            }
        }
        assert_eq!(
            Seen::Keyed(&keyed).to_value().into_owned()["content"],
            json!([{"type":"text"},"odd",{"type":"toolCall","id":"c\n1"},{"type":"toolCall","id":7},{"type":"toolCall","id":{"o":1}},{"type":"toolCall"},{"type":"toolCall","id":"c2"}])
        );
    }
}
