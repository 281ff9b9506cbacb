//! Scratch timing.
use pi_session_types::{ParsedLine, parse_line};
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let (file, _) = pi_session_store::open(&path).unwrap();
    let n = file.len();
    let t = Instant::now();
    let raws: Vec<Vec<u8>> = (0..n).map(|i| file.raw(i).unwrap()).collect();
    println!("raw each (reopen per call) {:?}", t.elapsed());
    let t = Instant::now();
    let vals: Vec<serde_json::Value> = raws.iter().map(|r| serde_json::from_slice(r).unwrap()).collect();
    println!("direct parse {:?}", t.elapsed());
    drop(vals);
    let t = Instant::now();
    let entries: Vec<_> = raws.iter().map(|r| match parse_line(r).unwrap().value { ParsedLine::Entry(e) => e, _ => panic!() }).collect();
    println!("parse_line {:?}", t.elapsed());
    let t = Instant::now();
    let vals: Vec<serde_json::Value> = entries.iter().map(|e| serde_json::to_value(e).unwrap()).collect();
    println!("to_value {:?}", t.elapsed());
    drop(vals);
    let t = Instant::now();
    let all: Vec<usize> = (0..n).collect();
    let e2 = file.entries_for(&all).unwrap();
    println!("entries_for {:?} {}", t.elapsed(), e2.len());
}
