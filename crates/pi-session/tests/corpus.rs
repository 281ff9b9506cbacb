//! Every session file we have — the real recorded sessions (../shared/corpus/real, not in the
//! repository) and every fixture — opens with the facade (damaged ones with diagnostics).
//! Where appending is allowed, appending to a copy then reopening gives the same context as the
//! live session had (the resume promise); where it is refused (no header, version 1), the
//! error names the way out, and that way out (`fork_to`, `migrate`) works.

use std::path::{Path, PathBuf};

use pi_session::{ErrorKind, ProjectOptions, Session, UserOptions, user};

use pi_session_test_support::{corpus_dir, fixtures_dir, jsonl_files};

fn corpus() -> Vec<PathBuf> {
    corpus_dir("real").map_or_else(Vec::new, |dir| jsonl_files(&dir))
}

fn fixtures() -> Vec<PathBuf> {
    let files = jsonl_files(&fixtures_dir());
    assert!(files.len() > 50, "the fixtures are in the repository");
    files
}

/// Opens a copy of `path` and checks the promise for it; returns whether it was appended to.
fn check(path: &Path) -> bool {
    let options = ProjectOptions::default();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join(path.file_name().unwrap());
    std::fs::copy(path, &copy).unwrap();
    let opened = Session::open(&copy, "anthropic:claude-x")
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut session = opened.session;
    let before = session.context(&options).unwrap();
    assert_eq!(
        pi_session::context(&opened.branch, &options),
        before,
        "{}",
        path.display()
    );
    match session.append(user("one more thing", UserOptions::new())) {
        Ok(_) => {
            let live = session.context(&options).unwrap();
            assert_eq!(
                live.last().map(|m| m.text()),
                Some("one more thing".to_owned()),
                "{}",
                path.display()
            );
            drop(session);
            let reopened = Session::open(&copy, "anthropic:claude-x").unwrap();
            assert_eq!(
                reopened.session.context(&options).unwrap(),
                live,
                "{}",
                path.display()
            );
            true
        }
        Err(error) => {
            let message = error.to_string();
            assert!(
                matches!(
                    error.kind(),
                    ErrorKind::NotASession | ErrorKind::NeedsMigration
                ),
                "{}: {error:?}",
                path.display()
            );
            assert!(message.contains("fork_to"), "{message}");
            if session.leaf_id().is_some() {
                let fork = session
                    .fork_to(dir.path().join("forks"), None)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(
                    fork.context(&options).unwrap(),
                    before,
                    "{}",
                    path.display()
                );
            }
            if error.kind() == ErrorKind::NeedsMigration {
                let migrated = Session::migrate(&copy).unwrap();
                assert!(migrated.backup.is_some_and(|b| b.exists()));
                let mut reopened = Session::open(&copy, "anthropic:claude-x").unwrap().session;
                assert_eq!(reopened.context(&options).unwrap(), before);
                reopened
                    .append(user("after migrating", UserOptions::new()))
                    .unwrap();
            }
            false
        }
    }
}

#[test]
fn every_corpus_session_opens_and_resumes_with_the_same_context() {
    let files = corpus();
    let appended = files.iter().filter(|path| check(path)).count();
    assert!(
        files.is_empty() || appended * 2 > files.len(),
        "most corpus files take appends: {appended} of {}",
        files.len()
    );
}

#[test]
fn every_fixture_opens_and_resumes_with_the_same_context() {
    let files = fixtures();
    let appended = files.iter().filter(|path| check(path)).count();
    assert!(appended * 2 > files.len(), "{appended} of {}", files.len());
}

/// The model found at open (a walk back from the leaf reading only the fields the rule needs)
/// is rho's `model_from` of the whole branch, on every fixture and corpus file.
#[test]
fn the_model_at_open_is_model_from_the_whole_branch_everywhere() {
    let default = "default:model";
    let mut compared = 0;
    for path in pi_session_test_support::fixture_and_corpus_files() {
        let Ok((session, _)) = Session::read_in(&pi_session::store::Store::Files, &path, default)
        else {
            continue;
        };
        let branch = session.branch().unwrap();
        let whole = pi_session::model_from(&branch).unwrap_or_else(|| default.to_owned());
        assert_eq!(session.model(), whole, "{}", path.display());
        compared += 1;
    }
    assert!(compared > 50, "{compared} files compared");
}
