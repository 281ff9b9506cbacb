//! Lines written by the store are byte-identical to JavaScript's `JSON.stringify`.
//!
//! The expected texts were produced once with node 22
//! (`node -e 'console.log(JSON.stringify(<value>))'`) and pasted here.

use crate::common::entry;
use pi_session_store::{SessionWriter, WriterOptions, new_header};
use serde_json::{Number, Value, json};

/// (the value as a Rust JSON value, what `JSON.stringify` prints for the same JS value)
fn table() -> Vec<(Value, &'static str)> {
    let float = |f: f64| Value::Number(Number::from_f64(f).unwrap());
    vec![
        (float(2.0), "2"),
        (float(2.5), "2.5"),
        (float(0.000001), "0.000001"),
        (float(1e-7), "1e-7"),
        (float(1e21), "1e+21"),
        (float(1e20), "100000000000000000000"),
        (float(1.7976931348623157e308), "1.7976931348623157e+308"),
        (float(-0.0), "0"),
        (float(0.30000000000000004), "0.30000000000000004"),
        (float(123456789012345680000.0), "123456789012345680000"),
        (float(5e-324), "5e-324"),
        (float(-1.5e-10), "-1.5e-10"),
        (float(100.0), "100"),
        (float(0.1), "0.1"),
        (float(1.0 / 3.0), "0.3333333333333333"),
        (float(9007199254740993.0), "9007199254740992"),
        (float(-123.456e-30), "-1.23456e-28"),
        (float(1.5e300), "1.5e+300"),
        (json!(100), "100"),
        (
            json!("\u{0}\u{1}\u{1f}\u{8}\u{c}\n\r\t"),
            r#""\u0000\u0001\u001f\b\f\n\r\t""#,
        ),
        (
            json!("\u{2028}\u{2029} \u{7f} é中 😀 / \"\\"),
            "\"\u{2028}\u{2029} \u{7f} é中 😀 / \\\"\\\\\"",
        ),
        (
            serde_json::from_str(
                r#"{"b":1,"1":2,"a":3,"0":4,"10":5,"01":6,"4294967295":7,"4294967294":8,"-1":9}"#,
            )
            .unwrap(),
            r#"{"0":4,"1":2,"10":5,"4294967294":8,"b":1,"a":3,"01":6,"4294967295":7,"-1":9}"#,
        ),
    ]
}

#[test]
fn appended_lines_match_json_stringify_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(dir.path(), new_header("/w"), WriterOptions::default());
    let cases = table();
    for (value, _) in &cases {
        writer
            .append(entry(
                "custom",
                &[("customType", json!("bytes")), ("data", value.clone())],
            ))
            .unwrap();
    }
    let text = std::fs::read_to_string(writer.path().unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(lines.len(), cases.len());
    for (line, (value, expected)) in lines.iter().zip(&cases) {
        let prefix = format!(r#"{{"type":"custom","customType":"bytes","data":{expected},"id":""#);
        assert!(
            line.starts_with(&prefix),
            "value {value:?}\n  line: {line}\n  want: {prefix}..."
        );
    }
}

#[test]
fn the_header_line_has_pi_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut header = new_header("/home/alice/proj");
    header.id = "0195f3a2-0000-7000-8000-000000000000".into();
    header.timestamp = Some("2026-03-15T22:40:18.123Z".into());
    let mut writer = SessionWriter::create(dir.path(), header, WriterOptions::default());
    writer
        .append(entry("label", &[("targetId", json!("x"))]))
        .unwrap();
    let path = writer.path().unwrap().to_path_buf();
    assert_eq!(
        path.file_name().unwrap().to_string_lossy(),
        "2026-03-15T22-40-18-123Z_0195f3a2-0000-7000-8000-000000000000.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        r#"{"type":"session","version":3,"id":"0195f3a2-0000-7000-8000-000000000000","timestamp":"2026-03-15T22:40:18.123Z","cwd":"/home/alice/proj"}"#
    );
}
