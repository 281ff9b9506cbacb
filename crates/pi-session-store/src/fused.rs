//! Recovery of JSON objects fused onto one line by a lost newline (`{...}{...}`).
//!
//! Real pi files contain such lines (see the corpus notes). A streaming JSON decoder walks the
//! line value by value; if the whole line is two or more complete values separated only by JSON
//! whitespace, each value's byte range is returned so it can be read as its own entry.

use std::ops::Range;

/// The byte ranges of the values on `line` when it holds two or more complete JSON values and
/// nothing else; `None` otherwise (including when the line holds just one value).
pub(crate) fn split_fused(line: &[u8]) -> Option<Vec<Range<usize>>> {
    let mut stream =
        serde_json::Deserializer::from_slice(line).into_iter::<serde::de::IgnoredAny>();
    let mut ranges = Vec::new();
    let mut previous_end = 0;
    while let Some(value) = stream.next() {
        if value.is_err() {
            return None;
        }
        let end = stream.byte_offset();
        let start = previous_end + leading_whitespace(&line[previous_end..end]);
        ranges.push(start..end);
        previous_end = end;
    }
    let rest_is_blank = line[previous_end..]
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
    (ranges.len() >= 2 && rest_is_blank).then_some(ranges)
}

fn leading_whitespace(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_objects_are_split_at_their_boundary() {
        let line = br#"{"type":"a","x":"}{"}{"type":"b"}"#;
        let ranges = split_fused(line).unwrap();
        assert_eq!(ranges.len(), 2);
        assert_eq!(&line[ranges[0].clone()], br#"{"type":"a","x":"}{"}"#);
        assert_eq!(&line[ranges[1].clone()], br#"{"type":"b"}"#);
    }

    #[test]
    fn whitespace_between_objects_is_not_part_of_either() {
        let line = br#"{"a":1}  {"b":2} "#;
        let ranges = split_fused(line).unwrap();
        assert_eq!(&line[ranges[1].clone()], br#"{"b":2}"#);
    }

    #[test]
    fn one_object_or_garbage_is_not_fused() {
        assert_eq!(split_fused(br#"{"a":1}"#), None);
        assert_eq!(split_fused(br#"{"a":1}{"b":"#), None);
        assert_eq!(split_fused(br#"{"a":1} trailing"#), None);
        assert_eq!(split_fused(b""), None);
    }
}
