//! Real recorded sessions (../shared/corpus/real, not in the repository): each one opens with
//! the facade, and appending to a copy then reopening gives the same context as the live
//! session had (the resume promise, on real data).

use std::path::PathBuf;

use pi_session::{ProjectOptions, Session, UserOptions, user};

fn corpus() -> Option<Vec<PathBuf>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/real");
    let Ok(read) = std::fs::read_dir(&dir) else {
        println!(
            "SKIP: no corpus at {} (it is not part of the repository)",
            dir.display()
        );
        return None;
    };
    let mut files: Vec<PathBuf> = read
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Some(files)
}

#[test]
fn every_corpus_session_resumes_with_the_same_context() {
    let Some(files) = corpus() else { return };
    assert!(!files.is_empty());
    let options = ProjectOptions::default();
    let mut resumed = 0;
    for path in &files {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join(path.file_name().unwrap());
        std::fs::copy(path, &copy).unwrap();
        let opened = match Session::open(&copy, "anthropic:claude-x") {
            Ok(opened) => opened,
            Err(error)
                if error.is_not_a_session()
                    || error.kind() == pi_session::ErrorKind::NeedsMigration =>
            {
                println!("{}: {error}", path.display());
                continue;
            }
            Err(error) => panic!("{}: {error}", path.display()),
        };
        let mut session = opened.session;
        assert_eq!(
            pi_session::context(&opened.branch, &options),
            session.context(&options).unwrap(),
            "{}",
            path.display()
        );
        session
            .append(user("one more thing", UserOptions::new()))
            .unwrap();
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
        resumed += 1;
    }
    assert!(
        resumed * 2 > files.len(),
        "most corpus files are sessions: {resumed} of {}",
        files.len()
    );
}
