//! `cargo xtask golden` (being built; see the issue tracker).

/// Runs `cargo xtask golden`.
pub fn run(_args: &[String]) -> Result<(), String> {
    Err("`cargo xtask golden` is not built yet".to_owned())
}
