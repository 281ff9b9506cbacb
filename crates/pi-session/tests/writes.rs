//! The facade's write paths beyond the turn loop: dialect-aware entries, `fork_to`, `migrate`,
//! named cursors saved in the file, tree queries, and the error kinds a host matches on.

use pi_session::tree::{ContextOptions, Dialect};
use pi_session::{
    CURSOR_CUSTOM_TYPE, CustomEntry, CustomMessage, ErrorKind, ProjectOptions, Reply, Session,
    SessionOptions, UserOptions, compaction, user,
};
use serde_json::{Value, json};

const MODEL: &str = "anthropic:claude-sonnet-4-5";

fn agent(session: &Session, dialect: Dialect) -> Value {
    session
        .agent_context(dialect, &ContextOptions::default())
        .unwrap()
        .0
        .to_value()
}

fn new_in(dir: &std::path::Path, dialect: Dialect) -> Session {
    let options = SessionOptions {
        dialect,
        ..SessionOptions::default()
    };
    Session::with_options(dir, MODEL, "/w", options)
}

fn lines(session: &Session) -> Vec<Value> {
    let text = std::fs::read_to_string(session.path().unwrap()).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn pi_sees_the_model_set_in_a_pi_file_and_omp_in_an_omp_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut pi = new_in(dir.path(), Dialect::PI);
    pi.append(user("hi", UserOptions::new())).unwrap();
    pi.set_model("openai:gpt-5").unwrap();
    pi.set_thinking_level(Some("high")).unwrap();
    let context = agent(&pi, Dialect::PI);
    assert_eq!(
        context["model"],
        json!({"provider": "openai", "modelId": "gpt-5"})
    );
    assert_eq!(context["thinkingLevel"], json!("high"));
    let reopened = Session::open(pi.path().unwrap(), "x:y").unwrap().session;
    assert_eq!(reopened.dialect(), Dialect::PI);
    assert_eq!(reopened.model(), "openai:gpt-5");

    let mut omp = new_in(dir.path(), Dialect::OMP);
    omp.append(user("hi", UserOptions::new())).unwrap();
    omp.set_model("openai:gpt-5").unwrap();
    omp.set_thinking_level(Some("low")).unwrap();
    let context = agent(&omp, Dialect::OMP);
    assert_eq!(context["models"]["default"], json!("openai/gpt-5"));
    assert_eq!(context["thinkingLevel"], json!("low"));
    let reopened = Session::open(omp.path().unwrap(), "x:y").unwrap().session;
    assert_eq!(reopened.dialect(), Dialect::OMP, "the title slot says omp");
    assert_eq!(reopened.model(), "openai:gpt-5");
}

#[test]
fn labels_names_and_custom_entries_read_back_in_each_dialect() {
    let dir = tempfile::tempdir().unwrap();
    for dialect in [Dialect::PI, Dialect::OMP] {
        let mut session = new_in(dir.path(), dialect);
        let first = session.append(user("one", UserOptions::new())).unwrap();
        let id = first.id().unwrap().to_owned();
        session.set_label(&id, Some("start")).unwrap();
        assert_eq!(session.label(&id).unwrap().as_deref(), Some("start"));
        session.set_label(&id, None).unwrap();
        assert_eq!(session.label(&id).unwrap(), None);
        session.set_label(&id, Some("again")).unwrap();
        let unknown = session.set_label("nope", Some("x")).unwrap_err();
        assert!(unknown.is_unknown_entry(), "{unknown:?}");
        session.set_name("Refactor the parser").unwrap();
        assert_eq!(
            session.name().unwrap().as_deref(),
            Some("Refactor the parser")
        );
        session
            .append_custom(&CustomEntry::new("host.state").data(json!({"n": 1})))
            .unwrap();
        session
            .append_custom_message(
                &CustomMessage::new("host.reminder", "Tests must pass.")
                    .details(json!({"rule": 7})),
            )
            .unwrap();
        session
            .append_reply(&Reply {
                text: "ok".into(),
                ..Reply::default()
            })
            .unwrap();
        let reopened = Session::open(session.path().unwrap(), MODEL)
            .unwrap()
            .session;
        assert_eq!(reopened.dialect(), dialect);
        assert_eq!(
            reopened.name().unwrap().as_deref(),
            Some("Refactor the parser"),
            "{dialect:?}"
        );
        assert_eq!(reopened.label(&id).unwrap().as_deref(), Some("again"));
        let context = agent(&reopened, dialect);
        let messages = context["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "custom", "assistant"], "{dialect:?}");
        assert_eq!(messages[1]["details"], json!({"rule": 7}));
        let file = lines(&reopened);
        let assistant = file.iter().find(|l| l["message"]["role"] == "assistant");
        assert_eq!(
            assistant.unwrap()["message"]["api"],
            json!("anthropic-messages")
        );
    }
}

#[test]
fn fork_to_gives_the_source_context_at_that_leaf_with_ids_kept() {
    let dir = tempfile::tempdir().unwrap();
    for dialect in [Dialect::PI, Dialect::OMP] {
        let mut session = new_in(dir.path(), dialect);
        let first = session.append(user("one", UserOptions::new())).unwrap();
        session.append(user("two", UserOptions::new())).unwrap();
        let kept = session.append(user("three", UserOptions::new())).unwrap();
        session
            .set_label(first.id().unwrap(), Some("first"))
            .unwrap();
        let compacted = session
            .append(compaction("S", kept.id().unwrap(), 100, 10))
            .unwrap();
        session.append(user("four", UserOptions::new())).unwrap();
        let mut side = session.fork();
        side.branch_to(kept.id().unwrap()).unwrap();
        side.append(user("elsewhere", UserOptions::new())).unwrap();

        let fork = session.fork_to(dir.path().join("forks"), None).unwrap();
        assert_eq!(fork.dialect(), dialect);
        assert_eq!(agent(&fork, dialect), agent(&session, dialect));
        assert_eq!(
            fork.context(&ProjectOptions::default()).unwrap(),
            session.context(&ProjectOptions::default()).unwrap()
        );
        let header = fork.header().unwrap();
        assert_eq!(
            header.parent_session.as_deref(),
            session.path().unwrap().to_str()
        );
        assert_ne!(header.id, session.id());
        let file = lines(&fork);
        let compaction_line = file.iter().find(|l| l["type"] == "compaction").unwrap();
        assert_eq!(compaction_line["id"].as_str(), compacted.id());
        assert_eq!(
            compaction_line["firstKeptEntryId"].as_str(),
            kept.id(),
            "references stay valid"
        );
        assert!(file.iter().any(|l| l["id"].as_str() == kept.id()));
        assert!(
            !file
                .iter()
                .any(|l| l["message"]["content"][0]["text"] == "elsewhere")
        );
        assert_eq!(
            fork.label(first.id().unwrap()).unwrap().as_deref(),
            Some("first")
        );

        // At an earlier entry: the context there.
        let early = session
            .fork_to(dir.path().join("forks"), side.leaf_id().as_deref())
            .unwrap();
        assert_eq!(agent(&early, dialect), agent(&side, dialect));
        let unknown = session
            .fork_to(dir.path().join("forks"), Some("nope"))
            .unwrap_err();
        assert!(unknown.is_unknown_entry());
    }
}

/// A copy of `fixtures/<fixture>` in `dir`.
fn copy_fixture(dir: &std::path::Path, fixture: &str) -> std::path::PathBuf {
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(fixture);
    let copy = dir.join(source.file_name().unwrap());
    std::fs::copy(&source, &copy).unwrap();
    copy
}

/// The migrated file is version 3, gives the context it gave `before`, and takes appends.
fn appends_after_migrating(path: &std::path::Path, before: &[pi_session::reqllm::Message]) {
    let mut session = Session::open(path, MODEL).unwrap().session;
    assert_eq!(session.header().unwrap().version_or_1(), 3);
    assert_eq!(session.context(&ProjectOptions::default()).unwrap(), before);
    session.append(user("more", UserOptions::new())).unwrap();
}

#[test]
fn a_version_1_file_is_read_forked_and_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let copy = copy_fixture(dir.path(), "invalid/v1-migration.jsonl");
    let mut session = Session::open(&copy, MODEL).unwrap().session;
    let before = session.context(&ProjectOptions::default()).unwrap();
    let refused = session
        .append(user("more", UserOptions::new()))
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::NeedsMigration);
    assert!(
        refused.to_string().contains("Session::migrate"),
        "{refused}"
    );
    let original = std::fs::read(&copy).unwrap();
    let migrated = Session::migrate(&copy).unwrap();
    let backup = migrated.backup.unwrap();
    assert_eq!(
        std::fs::read(&backup).unwrap(),
        original,
        ".bak is the file as it was"
    );
    let again = Session::migrate(&copy).unwrap();
    assert_eq!(again.backup, None, "a version 3 file is left as it is");
    appends_after_migrating(&copy, &before);
}

#[test]
fn a_version_2_file_is_read_but_appended_to_only_after_migrating() {
    let dir = tempfile::tempdir().unwrap();
    let copy = copy_fixture(dir.path(), "pi/v2-format.jsonl");
    let original = std::fs::read(&copy).unwrap();
    let opened = Session::open(&copy, MODEL).unwrap();
    let mut session = opened.session;
    let before = session.context(&ProjectOptions::default()).unwrap();
    assert!(!before.is_empty(), "read, migrated in memory");
    let refused = session
        .append(user("more", UserOptions::new()))
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::NeedsMigration);
    let message = refused.to_string();
    assert!(message.contains("version 2"), "{message}");
    assert!(message.contains("Session::migrate"), "{message}");
    assert!(message.contains("Session::fork_to"), "{message}");
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        original,
        "nothing was written"
    );

    Session::migrate(&copy).unwrap();
    appends_after_migrating(&copy, &before);
}

#[test]
fn migrate_is_refused_while_a_writer_or_omp_holds_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let copy = copy_fixture(dir.path(), "pi/v2-format.jsonl");
    let original = std::fs::read(&copy).unwrap();

    // Another writer of ours holds the writer lock.
    let held = pi_session::store::RewriteLock::acquire(&copy, None).unwrap();
    let busy = Session::migrate(&copy).unwrap_err();
    assert_eq!(busy.kind(), ErrorKind::Busy, "{busy}");
    drop(held);

    // omp is publishing (its lock file names a live process: this one).
    let publish = pi_session::store::publish_lock_path(&copy);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    std::fs::write(&publish, format!("{}:{now}", std::process::id())).unwrap();
    let busy = Session::migrate(&copy).unwrap_err();
    assert_eq!(busy.kind(), ErrorKind::Busy, "{busy}");
    assert!(busy.to_string().contains("omp"), "{busy}");
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        original,
        "nothing was written"
    );
    assert!(!pi_session::store::backup_path(&copy).exists());
    std::fs::remove_file(&publish).unwrap();

    let migrated = Session::migrate(&copy).unwrap();
    assert_eq!(std::fs::read(migrated.backup.unwrap()).unwrap(), original);
    assert!(
        !pi_session::store::lock_path(&copy).exists() && !publish.exists(),
        "both locks are released"
    );
}

#[test]
fn named_cursors_survive_reopening_and_change_no_context() {
    let dir = tempfile::tempdir().unwrap();
    let mut main = Session::new(dir.path(), MODEL, "/w");
    main.append(user("start", UserOptions::new())).unwrap();
    let mut side = main.fork_named("side");
    side.append(user("side one", UserOptions::new())).unwrap();
    side.set_model("openai:gpt-5").unwrap();
    side.append(user("side two", UserOptions::new())).unwrap();
    main.append(user("main one", UserOptions::new())).unwrap();
    let side_context = agent(&side, Dialect::PI);
    let side_omp = agent(&side, Dialect::OMP);

    let record = lines(&main)
        .into_iter()
        .find(|l| l["customType"] == CURSOR_CUSTOM_TYPE)
        .unwrap();
    assert_eq!(record["data"], json!({"name": "side"}));

    let reopened = Session::open(main.path().unwrap(), MODEL).unwrap().session;
    assert_eq!(reopened.branch_names(), ["side"]);
    let side = reopened.checkout("side").unwrap();
    assert_eq!(side.model(), "openai:gpt-5");
    assert_eq!(agent(&side, Dialect::PI), side_context);
    assert_eq!(agent(&side, Dialect::OMP), side_omp);
    let texts: Vec<String> = side
        .context(&ProjectOptions::default())
        .unwrap()
        .iter()
        .map(|m| m.text())
        .collect();
    assert_eq!(
        texts,
        ["start", "side one", "side two"],
        "the record is no message"
    );
}

#[test]
fn tree_queries_answer_over_the_live_log() {
    let mut session = Session::in_memory(MODEL, "/w");
    let first = session.append(user("one", UserOptions::new())).unwrap();
    let id = first.id().unwrap();
    let mut side = session.fork();
    let a = session.append(user("a", UserOptions::new())).unwrap();
    let b = side.append(user("b", UserOptions::new())).unwrap();
    assert_eq!(session.entry(id).unwrap().as_ref(), Some(&first));
    assert_eq!(session.entry("nope").unwrap(), None);
    assert_eq!(session.children(id).unwrap(), [a.clone(), b.clone()]);
    assert_eq!(
        session.tips(),
        [a.id().unwrap().to_owned(), b.id().unwrap().to_owned()]
    );
    let tree = session.tree_json().unwrap();
    assert_eq!(tree["leafId"], json!(b.id()));
    let read = session.tree();
    let kinds: Vec<String> = (0..read.index().len())
        .map(|at| read.entry(at).unwrap().kind().to_owned())
        .collect();
    assert_eq!(kinds, ["model_change", "message", "message", "message"]);
    assert_eq!(read.index().children(id).len(), 2);
}

#[test]
fn errors_have_kinds_say_what_to_do_and_print_each_fact_once() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_file = Session::open(dir.path(), MODEL).unwrap_err();
    assert_eq!(not_a_file.kind(), ErrorKind::NotAFile, "{not_a_file:?}");

    let missing = Session::open(dir.path().join("none.jsonl"), MODEL).unwrap_err();
    let os = std::error::Error::source(&missing).unwrap().to_string();
    assert!(!missing.to_string().contains(&os), "{missing}");
    assert_eq!(
        pi_session::error_chain(&missing),
        format!("{missing}: {os}")
    );

    let mut first = Session::new(dir.path(), MODEL, "/w");
    first.append(user("one", UserOptions::new())).unwrap();
    let path = first.path().unwrap();
    let mut stale = Session::open(&path, MODEL).unwrap().session;
    first.append(user("two", UserOptions::new())).unwrap();
    drop(first);
    let conflict = stale.append(user("three", UserOptions::new())).unwrap_err();
    assert!(conflict.is_conflict(), "{conflict:?}");
    assert!(conflict.to_string().contains("Session::open"), "{conflict}");
    assert!(!conflict.to_string().contains("open_for_append"));

    // omp's publish lock held by a live process (this one) for the whole wait.
    let mut reopened = Session::open(&path, MODEL).unwrap().session;
    let lock = pi_session::store::publish_lock_path(&path);
    std::fs::write(&lock, format!("{}:0", std::process::id())).unwrap();
    let busy = reopened
        .append(user("four", UserOptions::new()))
        .unwrap_err();
    std::fs::remove_file(&lock).unwrap();
    assert!(busy.is_busy(), "{busy:?}");
    assert!(busy.to_string().contains("retry later"), "{busy}");
}
