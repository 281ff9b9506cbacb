//! Integration tests of the facade (one test binary; see each module).

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod builders;
mod context_json;
mod corpus;
mod example;
mod manage;
mod model;
mod properties;
mod rho_sessions;
mod session;
mod stats;
mod streamed;
mod summary;
mod usage;
mod writers;
mod writes;

/// `text` written to `dir/name` and read back (`Session::read_in` from files, the default
/// model `anthropic:claude-x`): the session read and the file's path.
fn written_and_read(
    dir: &std::path::Path,
    name: &str,
    text: &str,
) -> (pi_session::Session, std::path::PathBuf) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let (session, _) = pi_session::Session::read_in(
        &pi_session::store::Store::Files,
        &path,
        "anthropic:claude-x",
    )
    .unwrap();
    (session, path)
}
