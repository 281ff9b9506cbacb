//! Debug helper (temporary): prints key-order differences between file and typed write.
fn keys(v: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            out.push(format!("{path}: {}", m.keys().cloned().collect::<Vec<_>>().join(",")));
            for (k, x) in m { keys(x, &format!("{path}.{k}"), out); }
        }
        serde_json::Value::Array(a) => for (i, x) in a.iter().enumerate() { keys(x, &format!("{path}[{i}]"), out); },
        _ => {}
    }
}
fn main() {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for p in std::env::args().skip(1) {
        let bytes = std::fs::read(&p).unwrap();
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let Ok(parsed) = pi_session_types::parse_line(line) else { continue };
            let w = pi_session_types::to_js_string(&parsed.value).unwrap();
            if w.as_bytes() == line { continue; }
            let a: serde_json::Value = serde_json::from_slice(line).unwrap();
            let b: serde_json::Value = serde_json::from_str(&w).unwrap();
            let (mut ka, mut kb) = (vec![], vec![]);
            keys(&a, "", &mut ka); keys(&b, "", &mut kb);
            let mut found = false;
            for (x, y) in ka.iter().zip(kb.iter()) {
                if x != y {
                    let norm = |s: &str| s.split(':').next().unwrap().replace(|c: char| c.is_ascii_digit(), "");
                    *seen.entry(format!("{}\n   file: {}\n   ours: {}", norm(x), x.split(": ").nth(1).unwrap_or(""), y.split(": ").nth(1).unwrap_or(""))).or_default() += 1;
                    found = true;
                    break;
                }
            }
            if !found { *seen.entry(format!("non-order diff: {}", &String::from_utf8_lossy(line)[..120.min(line.len())])).or_default() += 1; }
        }
    }
    for (k, n) in seen { println!("{n:5} {k}"); }
}
