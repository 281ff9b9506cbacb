//! The store benchmark's worker, driven by `cargo xtask bench store` (see xtask/src/bench.rs).
//!
//! Each mode runs in its own process so that peak memory (`VmHWM`) measures that mode alone:
//!
//! * `generate <file> <size-mb>`: writes a realistic session of about that size with the store's
//!   own writer (a mix of short user turns, assistant turns with thinking and tool calls, tool
//!   results from a few hundred bytes to 512 KB, model changes; text with escapes and about 2.5%
//!   non-ASCII bytes, the average of the real corpus);
//! * `open <file> <runs>`: opens it `runs` times (default options, then one thread), reads the
//!   last entry's body, and reports the times;
//! * `append <file> <count>`: appends `count` entries to a fresh file and to `<file>`,
//!   alternating between the two so both see the same machine load, and reports the per-append
//!   times of both;
//! * `chain <file> <entries>`: writes one chain of that many small entries, then opens it and
//!   reports the index's memory per entry (resident memory held by the open session, over its
//!   entry count);
//! * `damaged <file> <lines>`: writes a header and that many `{}` lines, opens it, and reports
//!   peak memory and how many diagnostics came back (kept in full, then counted);
//! * `clean <file> <bytes>`: the comparison for `damaged`: a clean session of that many bytes,
//!   opened, peak memory;
//! * `writers <file> <writers> <each>`: that many writers (threads, each with its own lock
//!   handle, as processes would) append `each` entries each to one session with a busy timeout,
//!   waiting for each other and catching up; reports the time and appends per second.
//!
//! Every mode prints one JSON object on stdout.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark tool"
)]

use pi_session_store::{
    Durability, OpenOptions, SessionWriter, WriterOptions, new_header, open_with,
};
use pi_session_types::{Entry, JsonMap, JsonValue};
use serde_json::json;
use std::path::Path;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or_else(|| usage());
    let result = match arg(0) {
        "generate" => generate(
            Path::new(arg(1)),
            arg(2).parse().unwrap_or_else(|_| usage()),
        ),
        "open" => bench_open(
            Path::new(arg(1)),
            arg(2).parse().unwrap_or_else(|_| usage()),
        ),
        "append" => bench_append(
            Path::new(arg(1)),
            arg(2).parse().unwrap_or_else(|_| usage()),
        ),
        "chain" => bench_chain(
            Path::new(arg(1)),
            arg(2).parse().unwrap_or_else(|_| usage()),
        ),
        "damaged" => bench_damaged(
            Path::new(arg(1)),
            arg(2).parse().unwrap_or_else(|_| usage()),
        ),
        "clean" => bench_clean(
            Path::new(arg(1)),
            arg(2).parse().unwrap_or_else(|_| usage()),
        ),
        "writers" => bench_writers(
            Path::new(arg(1)),
            arg(2).parse().unwrap_or_else(|_| usage()),
            arg(3).parse().unwrap_or_else(|_| usage()),
        ),
        _ => usage(),
    };
    println!("{result}");
}

fn usage() -> ! {
    eprintln!(
        "usage: store_bench generate <file> <size-mb> | open <file> <runs> | append <file> <count> | chain <file> <entries> | damaged <file> <lines> | clean <file> <bytes> | writers <file> <writers> <each>"
    );
    std::process::exit(2)
}

/// A small deterministic PRNG (xorshift64*), so every run generates the same session.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Text of `min` plus up to `spread` bytes.
    fn text_of(&mut self, min: u64, spread: u64) -> String {
        let len = min + self.below(spread);
        self.text(len as usize)
    }
    /// Text of about `len` bytes: words, code-ish punctuation, quotes, newlines, some non-ASCII.
    fn text(&mut self, len: usize) -> String {
        const WORDS: &[&str] = &[
            "the",
            "session",
            "file",
            "let",
            "fn",
            "return",
            "error",
            "=>",
            "{",
            "}",
            "\"quoted\"",
            "path/to/src.rs",
            "\n",
            "\t",
            "cargo",
            "build",
            "test",
            "if",
            "else",
            "match",
            "Ok(())",
            "\\n",
            "value",
            "JSON",
            "line",
            "0.25",
            "1e-7",
            "TODO:",
            "// comment",
            "<div>",
            "&amp;",
        ];
        // One word in 60 is non-ASCII: about 2.5% of the bytes, the corpus average.
        const NON_ASCII: &[&str] = &["überprüfen", "日本語のテキスト", "✓ done", "café", "한국어"];
        let mut out = String::with_capacity(len + 16);
        while out.len() < len {
            let word = if self.below(60) == 0 {
                NON_ASCII[self.below(NON_ASCII.len() as u64) as usize]
            } else {
                WORDS[self.below(WORDS.len() as u64) as usize]
            };
            out.push_str(word);
            out.push(' ');
        }
        out
    }
}

fn entry(kind: &str, fields: JsonValue) -> Entry {
    let mut map = JsonMap::new();
    map.insert("type".into(), kind.into());
    if let JsonValue::Object(fields) = fields {
        map.extend(fields);
    }
    Entry::from_map(map)
}

/// One turn's worth of entries, in the proportions real sessions show.
fn turn(rng: &mut Rng, n: u64) -> Vec<Entry> {
    let ts = 1_767_225_600_000u64 + n * 1000;
    let mut out = vec![entry(
        "message",
        json!({"message": {"role": "user", "content": [{"type": "text", "text": rng.text_of(100, 2000)}], "timestamp": ts}}),
    )];
    for call in 0..1 + rng.below(4) {
        let call_id = format!("toolu_{n:08}_{call}");
        out.push(entry("message", json!({"message": {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": rng.text_of(200, 3000), "thinkingSignature": rng.text(300)},
                {"type": "text", "text": rng.text_of(50, 1500)},
                {"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": rng.text(40), "timeout": 120}}
            ],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": {"input": rng.below(200_000), "output": rng.below(8000), "cacheRead": rng.below(100_000), "cacheWrite": 0,
                      "totalTokens": rng.below(300_000), "cost": {"input": 0.003, "output": 0.015, "cacheRead": 0.0003, "cacheWrite": 0, "total": 0.0183}},
            "stopReason": "toolUse", "timestamp": ts + 1
        }})));
        let size = match rng.below(100) {
            0..=59 => 200 + rng.below(2000),
            60..=94 => 2000 + rng.below(30_000),
            95..=98 => 30_000 + rng.below(100_000),
            _ => 512 * 1024,
        };
        out.push(entry("message", json!({"message": {
            "role": "toolResult", "toolCallId": call_id, "toolName": "bash",
            "content": [{"type": "text", "text": rng.text(size as usize)}], "isError": rng.below(20) == 0, "timestamp": ts + 2
        }})));
    }
    if rng.below(30) == 0 {
        out.push(entry(
            "model_change",
            json!({"provider": "anthropic", "modelId": "claude-opus-4-1"}),
        ));
    }
    out
}

fn generate(path: &Path, size_mb: u64) -> JsonValue {
    let _ = std::fs::remove_file(path);
    let started = Instant::now();
    let target = size_mb << 20;
    let options = WriterOptions {
        durability: Durability::Buffered,
        ..WriterOptions::default()
    };
    let mut writer = SessionWriter::create_at(path, new_header("/home/bench/project"), options);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut n, mut entries, mut bytes) = (0u64, 0u64, 0u64);
    while bytes < target {
        for e in turn(&mut rng, n) {
            let written = writer.append(e).expect("append");
            bytes += pi_session_types::to_js_vec(&written).expect("json").len() as u64 + 1;
            entries += 1;
        }
        n += 1;
    }
    writer.flush().expect("flush");
    let size = std::fs::metadata(path).expect("metadata").len();
    json!({"mode": "generate", "bytes": size, "entries": entries, "seconds": started.elapsed().as_secs_f64()})
}

/// The middle value (the upper one of an even count): `percentile(values, 0.5)`.
fn median(values: &[f64]) -> f64 {
    percentile(values, 0.5)
}

/// The value at rank `round((len - 1) * q)` of the sorted values.
fn percentile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn time_opens(path: &Path, runs: usize, options: &OpenOptions) -> (Vec<f64>, usize) {
    let mut times = Vec::with_capacity(runs);
    let mut entries = 0;
    for _ in 0..runs {
        let started = Instant::now();
        let (session, diagnostics) = open_with(path, options).expect("open");
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        assert!(
            diagnostics.is_empty(),
            "the generated file must be clean: {:?}",
            &diagnostics[..1]
        );
        entries = session.len();
        let last = session.entry(entries - 1).expect("last entry");
        assert!(last.id().is_some());
    }
    (times, entries)
}

fn bench_open(path: &Path, runs: usize) -> JsonValue {
    let size = std::fs::metadata(path).expect("metadata").len();
    let index_bytes_per_entry = index_bytes_per_entry(path);
    let cpu_before = cpu_ms();
    let (times, entries) = time_opens(path, runs, &OpenOptions::default());
    let cpu_per_open = (cpu_ms() - cpu_before) / runs as f64;
    let hwm_default = peak_rss_mb();
    let one_thread = OpenOptions {
        threads: 1,
        ..OpenOptions::default()
    };
    let (single, _) = time_opens(path, runs.min(3), &one_thread);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    json!({
        "mode": "open", "bytes": size, "entries": entries, "threads": threads,
        "open_ms_runs": times, "open_ms_median": median(&times),
        "open_ms_median_one_thread": median(&single),
        "mb_per_second": size as f64 / (1 << 20) as f64 / (median(&times) / 1000.0),
        "cpu_ms_per_open": cpu_per_open,
        "load_average_1m": load_average(),
        "peak_rss_mb": hwm_default,
        "index_bytes_per_entry": index_bytes_per_entry,
    })
}

/// Resident memory an open session of `path` holds, per entry (bytes): resident memory with
/// the session open, less before, over its entries. Measured first in a fresh process, after
/// one warm-up open whose buffers the allocator keeps for the second.
fn index_bytes_per_entry(path: &Path) -> f64 {
    drop(open_with(path, &OpenOptions::default()).expect("open"));
    let before = rss_bytes();
    let (session, _) = open_with(path, &OpenOptions::default()).expect("open");
    let held = rss_bytes().saturating_sub(before);
    let per_entry = held as f64 / session.len().max(1) as f64;
    drop(session);
    per_entry
}

fn bench_chain(path: &Path, count: usize) -> JsonValue {
    let _ = std::fs::remove_file(path);
    let options = WriterOptions {
        durability: Durability::Buffered,
        ..WriterOptions::default()
    };
    let mut writer = SessionWriter::create_at(path, new_header("/w"), options);
    let mut rng = Rng(7);
    for _ in 0..count {
        let e = entry(
            "message",
            json!({"message": {"role": "user", "content": rng.text(120), "timestamp": 1}}),
        );
        writer.append(e).expect("append");
    }
    writer.flush().expect("flush");
    drop(writer);
    let bytes = std::fs::metadata(path).expect("metadata").len();
    json!({
        "mode": "chain", "entries": count, "bytes": bytes,
        "index_bytes_per_entry": index_bytes_per_entry(path),
        "peak_rss_mb": peak_rss_mb(),
    })
}

fn bench_damaged(path: &Path, lines: usize) -> JsonValue {
    let mut bytes = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#.to_vec();
    bytes.push(b'\n');
    bytes.extend(std::iter::repeat_n(&b"{}\n"[..], lines).flatten());
    std::fs::write(path, &bytes).expect("write");
    drop(bytes);
    let (session, diagnostics) = open_with(path, &OpenOptions::default()).expect("open");
    json!({
        "mode": "damaged", "lines": lines, "bytes": std::fs::metadata(path).expect("metadata").len(),
        "entries": session.len(), "diagnostics_kept": diagnostics.len(),
        "peak_rss_mb": peak_rss_mb(),
    })
}

fn bench_clean(path: &Path, bytes: u64) -> JsonValue {
    let _ = std::fs::remove_file(path);
    let options = WriterOptions {
        durability: Durability::Buffered,
        ..WriterOptions::default()
    };
    let mut writer = SessionWriter::create_at(path, new_header("/w"), options);
    let mut rng = Rng(9);
    let mut written = 0u64;
    while written < bytes {
        let e = entry(
            "message",
            json!({"message": {"role": "user", "content": rng.text(120), "timestamp": 1}}),
        );
        let back = writer.append(e).expect("append");
        written += pi_session_types::to_js_vec(&back).expect("json").len() as u64 + 1;
    }
    writer.flush().expect("flush");
    drop(writer);
    let (session, diagnostics) = open_with(path, &OpenOptions::default()).expect("open");
    assert!(diagnostics.is_empty());
    json!({
        "mode": "clean", "bytes": std::fs::metadata(path).expect("metadata").len(),
        "entries": session.len(), "peak_rss_mb": peak_rss_mb(),
    })
}

fn bench_writers(path: &Path, writers: usize, each: usize) -> JsonValue {
    let _ = std::fs::remove_file(path);
    let mut first = SessionWriter::create_at(path, new_header("/w"), WriterOptions::default());
    first
        .append(entry("label", json!({"targetId": "x"})))
        .expect("append");
    drop(first);
    let options = WriterOptions {
        busy_timeout: Some(std::time::Duration::from_secs(120)),
        ..WriterOptions::default()
    };
    let started = Instant::now();
    std::thread::scope(|scope| {
        for w in 0..writers {
            scope.spawn(move || {
                let mut rng = Rng(100 + w as u64);
                let (mut writer, _, _) =
                    SessionWriter::open_for_append(path, options).expect("resume");
                for _ in 0..each {
                    let e = entry(
                        "message",
                        json!({"message": {"role": "user", "content": rng.text(200), "timestamp": 1}}),
                    );
                    writer.append(e).expect("append");
                }
            });
        }
    });
    let seconds = started.elapsed().as_secs_f64();
    let (session, diagnostics) = open_with(path, &OpenOptions::default()).expect("open");
    assert!(diagnostics.is_empty(), "{:?}", &diagnostics[..1]);
    assert_eq!(session.len(), 1 + writers * each);
    json!({
        "mode": "writers", "writers": writers, "appends_each": each, "durability": "Flush",
        "busy_timeout_s": 120, "seconds": seconds,
        "appends_per_sec": (writers * each) as f64 / seconds,
        "peak_rss_mb": peak_rss_mb(),
    })
}

fn bench_append(path: &Path, count: usize) -> JsonValue {
    let dir = path.parent().expect("parent");
    let fresh = dir.join("fresh.jsonl");
    let _ = std::fs::remove_file(&fresh);
    let mut rng = Rng(42);
    let count = count.max(2);
    let mut early_writer =
        SessionWriter::create_at(&fresh, new_header("/w"), WriterOptions::default());
    let (mut late_writer, _, _) =
        SessionWriter::open_for_append(path, WriterOptions::default()).expect("resume");
    // Alternate between the two files so that both see the same load from other processes.
    let (mut early, mut late) = (Vec::with_capacity(count), Vec::with_capacity(count));
    for _ in 0..count {
        early.push(time_append(&mut early_writer, &mut rng));
        late.push(time_append(&mut late_writer, &mut rng));
    }
    // The first append of each writer creates the file or takes the lock: report it apart.
    let (early_first, late_first) = (early[0], late[0]);
    let (early, late) = (&early[1..], &late[1..]);
    let (early_p50, late_p50) = (median(early), median(late));
    let per_second = |times: &[f64]| 1e6 * times.len() as f64 / times.iter().sum::<f64>();
    json!({
        "mode": "append", "count": count, "durability": "Flush", "late_file_bytes": std::fs::metadata(path).expect("metadata").len(),
        "first_append_us_early": early_first, "first_append_us_late": late_first,
        "append_us_p50_early": early_p50, "append_us_p50_late": late_p50,
        "append_us_p99_early": percentile(early, 0.99), "append_us_p99_late": percentile(late, 0.99),
        "appends_per_sec_early": per_second(early), "appends_per_sec_late": per_second(late),
        "late_over_early_p50": late_p50 / early_p50,
    })
}

/// Appends one small user message; returns the time it took in microseconds.
fn time_append(writer: &mut SessionWriter, rng: &mut Rng) -> f64 {
    let e = entry(
        "message",
        json!({"message": {"role": "user", "content": rng.text(300), "timestamp": 1}}),
    );
    let started = Instant::now();
    writer.append(e).expect("append");
    started.elapsed().as_secs_f64() * 1e6
}

/// CPU time (user + system, all threads) this process has used, in ms; from /proc/self/stat
/// (clock ticks of 10 ms; 0 where /proc is not available).
fn cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name: state is field 3; utime, stime are 14, 15.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) * 10.0
}

/// The machine's 1-minute load average (other work competing for the cores), if known.
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0.0)
}

/// A `kB` field of /proc/self/status, in bytes (0 where /proc is not available).
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Resident memory of this process now, in bytes (`VmRSS`).
fn rss_bytes() -> u64 {
    status_bytes("VmRSS:")
}

/// Peak resident memory of this process in MiB (`VmHWM`).
fn peak_rss_mb() -> f64 {
    status_bytes("VmHWM:") as f64 / (1 << 20) as f64
}
