//! `cargo xtask record` (being built; see the issue tracker).

/// Runs `cargo xtask record`.
pub fn run(_args: &[String]) -> Result<(), String> {
    Err("`cargo xtask record` is not built yet".to_owned())
}
