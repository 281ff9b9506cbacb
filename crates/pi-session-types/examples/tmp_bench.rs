//! temporary
#![allow(clippy::unwrap_used, clippy::print_stdout)]
fn main() {
    let mut all = Vec::new();
    for p in std::env::args().skip(1) {
        all.extend(std::fs::read(p).unwrap());
        all.push(b'\n');
    }
    let lines: Vec<&[u8]> = all
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let mb = all.len() as f64 / 1e6;
    for round in 0..3 {
        let t = std::time::Instant::now();
        let mut n = 0;
        for l in &lines {
            if pi_session_types::parse_envelope(l).is_ok() {
                n += 1;
            }
        }
        let e = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let mut m = 0;
        for l in &lines {
            if let Ok(p) = pi_session_types::parse_line(l) {
                m += 1;
                std::hint::black_box(p);
            }
        }
        let f = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        for l in &lines {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(l) {
                std::hint::black_box(v);
            }
        }
        let v = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let mut w = 0usize;
        let parsed: Vec<_> = lines
            .iter()
            .filter_map(|l| pi_session_types::parse_line(l).ok())
            .collect();
        let t0 = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        for p in &parsed {
            w += pi_session_types::to_js_vec(&p.value).unwrap().len();
        }
        let ws = t.elapsed().as_secs_f64();
        println!(
            "round {round}: {mb:.1} MB, {n}/{m} lines: envelope {:.0} MB/s, parse_line {:.0} MB/s, Value {:.0} MB/s, write {:.0} MB/s ({w} B) [{t0:.3}]",
            mb / e,
            mb / f,
            mb / v,
            w as f64 / 1e6 / ws
        );
    }
}
