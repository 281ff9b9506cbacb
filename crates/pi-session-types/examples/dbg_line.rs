//! Debug helper (temporary).
fn main() {
    let p = std::env::args().nth(1).unwrap();
    let b = std::fs::read(p).unwrap();
    let line = b.split(|c| *c == b'\n').next().unwrap();
    let parsed = pi_session_types::parse_line(line).unwrap();
    println!("{}", pi_session_types::to_js_string(&parsed.value).unwrap());
}
