//! `to_js_string` writes exactly what JavaScript's `JSON.stringify` writes. Expected bytes were
//! produced once with node v20 (`node -e 'console.log(JSON.stringify(x))'`) and pasted here.

use pi_session_types::json::{to_js_string, to_js_writer};
use serde_json::{Map, Value, json};

fn f(x: f64) -> String {
    to_js_string(&x).unwrap()
}

#[test]
fn numbers_match_node() {
    let table: &[(f64, &str)] = &[
        (2.0, "2"),
        (2.5, "2.5"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (1e21, "1e+21"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (-0.0, "0"),
        (0.30000000000000004, "0.30000000000000004"),
        (123456789012345680000.0, "123456789012345680000"),
        (5e-324, "5e-324"),
        (-1.5e-10, "-1.5e-10"),
        (1e20, "100000000000000000000"),
        (123e-20, "1.23e-18"),
        (100.0, "100"),
        (0.1, "0.1"),
        (-0.0000001, "-1e-7"),
        (f64::NAN, "null"),
        (f64::INFINITY, "null"),
        (f64::NEG_INFINITY, "null"),
    ];
    for (value, expected) in table {
        assert_eq!(f(*value), *expected, "formatting {value:e}");
        // Through serde_json::Value as well (where representable).
        if let Some(number) = serde_json::Number::from_f64(*value) {
            assert_eq!(to_js_string(&Value::Number(number)).unwrap(), *expected);
        }
    }
}

#[test]
fn integers_match_node() {
    // JS holds 9007199254740993 as the double 9007199254740992.
    let table: &[(Value, &str)] = &[
        (json!(9007199254740993u64), "9007199254740992"),
        (json!(4294967295u64), "4294967295"),
        (json!(-42), "-42"),
        (json!(0), "0"),
        (json!(u64::MAX), "18446744073709552000"),
        (json!(i64::MIN), "-9223372036854776000"),
    ];
    for (value, expected) in table {
        assert_eq!(
            to_js_string(value).unwrap(),
            *expected,
            "formatting {value}"
        );
    }
}

#[test]
fn strings_match_node() {
    let table: &[(&str, &str)] = &[
        (
            "a\u{0}b\u{1f}\u{8}\u{c}\n\r\t\"\\",
            r#""a\u0000b\u001f\b\f\n\r\t\"\\""#,
        ),
        ("\u{2028}\u{2029}", "\"\u{2028}\u{2029}\""),
        ("😀", "\"😀\""),
        ("x/y\u{7f}\u{80}é", "\"x/y\u{7f}\u{80}é\""),
    ];
    for (value, expected) in table {
        assert_eq!(
            to_js_string(value).unwrap(),
            *expected,
            "formatting {value:?}"
        );
    }
}

#[test]
fn lone_surrogates_are_written_as_node_writes_them() {
    // node: JSON.stringify(["\ud83d", "a\ude00b", "\udbff", "😀", "\ufffd"]) — a lone
    // surrogate is carried as U+10F800+k in a Rust String and written as the lowercase escape.
    let value = serde_json::json!(["\u{10F83D}", "a\u{10FE00}b", "\u{10FBFF}", "😀", "\u{fffd}"]);
    assert_eq!(
        to_js_string(&value).unwrap(),
        "[\"\\ud83d\",\"a\\ude00b\",\"\\udbff\",\"😀\",\"\u{fffd}\"]"
    );
}

#[test]
fn integer_like_keys_come_first_in_numeric_order() {
    let mut map = Map::new();
    for (key, value) in [
        ("b", 1),
        ("1", 2),
        ("a", 3),
        ("0", 4),
        ("10", 5),
        ("01", 6),
        ("4294967294", 7),
        ("4294967295", 8),
        ("-1", 9),
        ("2", 10),
    ] {
        map.insert(key.to_string(), json!(value));
    }
    assert_eq!(
        to_js_string(&Value::Object(map)).unwrap(),
        r#"{"0":4,"1":2,"2":10,"10":5,"4294967294":7,"b":1,"a":3,"01":6,"4294967295":8,"-1":9}"#
    );
}

#[test]
fn nested_objects_reorder_independently_and_non_finite_is_null() {
    #[derive(serde::Serialize)]
    struct Inner {
        x: f64,
        y: f64,
        w: f64,
    }
    let mut inner = Map::new();
    inner.insert("b".into(), json!(1));
    inner.insert("0".into(), json!(2));
    let mut z = Map::new();
    z.insert("3".into(), json!([1, Value::Object(inner)]));
    z.insert(
        "x".into(),
        serde_json::to_value(Inner {
            x: 0.0,
            y: 0.0,
            w: 0.0,
        })
        .unwrap(),
    );
    assert_eq!(
        to_js_string(&json!({ "z": Value::Object(z) })).unwrap(),
        r#"{"z":{"3":[1,{"0":2,"b":1}],"x":{"x":0,"y":0,"w":0}}}"#
    );
    assert_eq!(
        to_js_string(&Inner {
            x: f64::NAN,
            y: f64::INFINITY,
            w: f64::NEG_INFINITY
        })
        .unwrap(),
        r#"{"x":null,"y":null,"w":null}"#
    );
}

#[test]
fn integer_map_keys_are_reordered_too() {
    let map: std::collections::BTreeMap<String, u8> = [("z".to_string(), 1), ("7".to_string(), 2)]
        .into_iter()
        .collect();
    assert_eq!(to_js_string(&map).unwrap(), r#"{"7":2,"z":1}"#);
    let by_number: std::collections::HashMap<u32, u8> = [(5u32, 1u8)].into_iter().collect();
    assert_eq!(to_js_string(&by_number).unwrap(), r#"{"5":1}"#);
}

#[test]
fn writer_writes_the_same_bytes() {
    let value = json!({"a": [1.5, "x"], "2": null});
    let mut out = Vec::new();
    to_js_writer(&mut out, &value).unwrap();
    assert_eq!(out, br#"{"2":null,"a":[1.5,"x"]}"#);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        to_js_string(&value).unwrap()
    );
}
