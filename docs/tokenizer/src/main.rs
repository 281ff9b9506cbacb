//! Compares `ceil(bytes / 4)` with tiktoken-rs's `o200k_base` and `cl100k_base` over the message
//! texts of the real sessions in `../shared/corpus/real`, per role and block kind.

use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Instant;

/// (role/kind, text) of every text, thinking and tool-call argument block of every message.
fn texts(corpus: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(corpus)
        .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    for file in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
    {
        let bytes = std::fs::read(file).unwrap_or_default();
        for line in String::from_utf8_lossy(&bytes).lines() {
            let Ok(entry) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if entry["type"] != "message" {
                continue;
            }
            let message = &entry["message"];
            let role = message["role"].as_str().unwrap_or("?");
            let mut push = |kind: &str, text: String| {
                if !text.is_empty() {
                    out.push((format!("{role}/{kind}"), text));
                }
            };
            match &message["content"] {
                Value::String(text) => push("text", text.clone()),
                Value::Array(blocks) => {
                    for block in blocks {
                        match block["type"].as_str() {
                            Some("text") => {
                                push("text", block["text"].as_str().unwrap_or("").into())
                            }
                            Some("thinking") => {
                                push("thinking", block["thinking"].as_str().unwrap_or("").into())
                            }
                            Some("toolCall") => push("args", block["arguments"].to_string()),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

fn main() {
    let corpus = std::path::Path::new("../../../shared/corpus/real");
    let texts = texts(corpus);
    if texts.is_empty() {
        eprintln!("no texts: ../shared/corpus/real is absent beside the repository");
        return;
    }
    let total_bytes: usize = texts.iter().map(|(_, t)| t.len()).sum();
    let started = Instant::now();
    let estimate: u64 = texts
        .iter()
        .map(|(_, t)| (t.len() as u64).div_ceil(4))
        .sum();
    println!(
        "ceil(bytes/4): {} texts, {:.1} MB, {estimate} tokens in {:?}",
        texts.len(),
        total_bytes as f64 / 1e6,
        started.elapsed()
    );
    for name in ["o200k_base", "cl100k_base"] {
        let started = Instant::now();
        let bpe = match name {
            "o200k_base" => tiktoken_rs::o200k_base(),
            _ => tiktoken_rs::cl100k_base(),
        }
        .expect("the tokenizer's tables are embedded in the crate");
        let load = started.elapsed();
        let started = Instant::now();
        let mut groups: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
        let mut relative_error = 0.0;
        for (group, text) in &texts {
            let exact = bpe.encode_ordinary(text).len() as u64;
            let estimate = (text.len() as u64).div_ceil(4);
            let row = groups.entry(group).or_default();
            row.0 += text.len() as u64;
            row.1 += exact;
            row.2 += estimate;
            relative_error += (estimate as f64 - exact as f64).abs() / exact.max(1) as f64;
        }
        let elapsed = started.elapsed();
        println!(
            "{name}: tables load in {load:?}; counted in {elapsed:?} ({:.1} MB/s); mean |error| of bytes/4 per text {:.1}%",
            total_bytes as f64 / 1e6 / elapsed.as_secs_f64(),
            100.0 * relative_error / texts.len() as f64
        );
        let mut total = (0, 0, 0);
        for (group, (bytes, exact, estimate)) in groups.iter().chain([(&"total", &(0, 0, 0))]) {
            let (bytes, exact, estimate) = if *group == "total" {
                total
            } else {
                total = (total.0 + bytes, total.1 + exact, total.2 + estimate);
                (*bytes, *exact, *estimate)
            };
            println!(
                "  {group:20} {bytes:>9} bytes {exact:>8} tokens ({:.2} bytes/token); bytes/4 says {estimate:>8} ({:+.1}%)",
                bytes as f64 / exact as f64,
                100.0 * (estimate as f64 - exact as f64) / exact as f64
            );
        }
    }
}
