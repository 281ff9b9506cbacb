//! Bun's `Bun.hash(string)`: Zig's `std.hash.Wyhash` (wyhash "final" with
//! Zig's secrets) with seed 0 over the string's UTF-8 bytes (a lone
//! surrogate encoded as U+FFFD, as `TextEncoder` does), a 64-bit unsigned
//! integer. omp's pi-ai names replayed ids with it
//! (`Bun.hash(id).toString(36)`), so a request body is only reproducible with
//! this exact function. No crate reproduces Zig's variant (the `wyhash`
//! crates implement other rounds or secrets); the test vectors below were
//! recorded from the pinned Bun.

const SECRET: [u64; 4] = [
    0xa076_1d64_78bd_642f,
    0xe703_7ed1_a0b4_28db,
    0x8ebc_6af0_9c88_c6e3,
    0x5899_65cc_7537_4cc3,
];

fn mum(a: u64, b: u64) -> (u64, u64) {
    let x = u128::from(a) * u128::from(b);
    // Truncation intended: the low and high halves of the 128-bit product.
    #[allow(clippy::cast_possible_truncation)]
    (x as u64, (x >> 64) as u64)
}

fn mix(a: u64, b: u64) -> u64 {
    let (lo, hi) = mum(a, b);
    lo ^ hi
}

fn read(bytes: &[u8], at: usize, n: usize) -> u64 {
    let mut out = 0u64;
    for (i, byte) in bytes[at..at + n].iter().enumerate() {
        out |= u64::from(*byte) << (8 * i);
    }
    out
}

/// Zig's `std.hash.Wyhash.hash(seed, input)`.
pub fn wyhash(seed: u64, input: &[u8]) -> u64 {
    let mut state = [seed ^ mix(seed ^ SECRET[0], SECRET[1]); 3];
    let len = input.len();
    let (a, b);
    if len <= 16 {
        if len >= 4 {
            let end = len - 4;
            let quarter = (len >> 3) << 2;
            a = (read(input, 0, 4) << 32) | read(input, quarter, 4);
            b = (read(input, end, 4) << 32) | read(input, end - quarter, 4);
        } else if len > 0 {
            a = (u64::from(input[0]) << 16)
                | (u64::from(input[len >> 1]) << 8)
                | u64::from(input[len - 1]);
            b = 0;
        } else {
            a = 0;
            b = 0;
        }
    } else {
        let mut i = 0;
        if len >= 48 {
            while i + 48 < len {
                for (lane, s) in state.iter_mut().enumerate() {
                    let x = read(input, i + 16 * lane, 8);
                    let y = read(input, i + 16 * lane + 8, 8);
                    *s = mix(x ^ SECRET[lane + 1], y ^ *s);
                }
                i += 48;
            }
            state[0] ^= state[1] ^ state[2];
        }
        let rest = &input[i..];
        let mut j = 0;
        while j + 16 < rest.len() {
            state[0] = mix(
                read(rest, j, 8) ^ SECRET[1],
                read(rest, j + 8, 8) ^ state[0],
            );
            j += 16;
        }
        a = read(input, len - 16, 8);
        b = read(input, len - 8, 8);
    }
    let (a, b) = mum(a ^ SECRET[1], b ^ state[0]);
    mix(a ^ SECRET[0] ^ len as u64, b ^ SECRET[1])
}

/// `Bun.hash(text)` (UTF-8 bytes, seed 0; a lone surrogate, carried as U+10F800+k, is encoded
/// as U+FFFD, as Bun encodes a string).
pub fn bun_hash(text: &str) -> u64 {
    wyhash(0, pi_session_types::js::to_well_formed(text).as_bytes())
}

/// `Bun.hash(text).toString(36)`.
pub fn bun_hash36(text: &str) -> String {
    pi_session_types::js::to_base36(bun_hash(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded from `Bun.hash(s)` of the pinned bun (`xtask/recorder/node_modules/.bin/bun`).
    #[test]
    fn matches_bun() {
        let vectors: &[(&str, u64, &str)] = &[
            ("", 290873116282709081, "27k1wwwhf13t"),
            ("a", 2941419223392617777, "mcie3cqm6cz5"),
            ("abc", 190542993387777138, "1g45uqqks6lu"),
            ("message digest", 4742346353319458430, "10131haqs27i6"),
            (
                "abcdefghijklmnopqrstuvwxyz",
                8597275765368073426,
                "1tbg7wqo1wdea",
            ),
            ("toolu_01", 5546962721931248368, "1655m6flsimls"),
            ("empty", 12992053032056101930, "2qpgyfjaphmay"),
            ("é", 1783465187472633034, "djspn8dun5ca"),
            ("日本語", 9333711280020391303, "1ywvgifmgd8qv"),
            ("😀x", 12509845724853065343, "2n1ky7gj0iuf3"),
        ];
        for (text, expected, base36) in vectors {
            assert_eq!(bun_hash(text), *expected, "{text:?}");
            assert_eq!(bun_hash36(text), *base36, "{text:?}");
        }
    }

    /// Every length from 1 to 70 (the short, middle and 48-byte-round paths).
    #[test]
    fn matches_bun_at_every_length() {
        let expected: Vec<u64> =
            serde_json::from_str(include_str!("bun_hash_lengths.json")).unwrap_or_default();
        assert_eq!(expected.len(), 70);
        let mut text = String::new();
        for (i, want) in expected.iter().enumerate() {
            text.push(char::from(48 + (i % 40) as u8));
            assert_eq!(bun_hash(&text), *want, "length {}", i + 1);
        }
    }
}
