//! Scratch: compares the typed round trip with a direct parse, line by line.
use pi_session_types::{ParsedLine, parse_line};
fn main() {
    let mut same = 0usize;
    let mut diff = 0usize;
    let mut shown = 0;
    for path in std::env::args().skip(1) {
        let Ok(bytes) = std::fs::read(&path) else { continue };
        for line in bytes.split(|&b| b == b'\n') {
            let Ok(parsed) = parse_line(line) else { continue };
            let ParsedLine::Entry(entry) = parsed.value else { continue };
            let typed = serde_json::to_value(&entry).unwrap();
            let text = String::from_utf8_lossy(line);
            let text = pi_session_types::line::replace_lone_surrogate_escapes(&text).into_owned();
            let direct: serde_json::Value = serde_json::from_str(&text).unwrap();
            let a = serde_json::to_string(&typed).unwrap();
            let b = serde_json::to_string(&direct).unwrap();
            if a == b && typed == direct { same += 1 } else {
                diff += 1;
                if shown < 6 { shown += 1; println!("DIFF in {path}\n typed : {}\n direct: {}", &a[..a.len().min(400)], &b[..b.len().min(400)]); }
            }
        }
    }
    println!("same {same} diff {diff}");
}
