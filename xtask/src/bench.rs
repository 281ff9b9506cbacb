//! `cargo xtask bench` (being built; see the issue tracker).

/// Runs `cargo xtask bench`.
pub fn run(_args: &[String]) -> Result<(), String> {
    Err("`cargo xtask bench` is not built yet".to_owned())
}
