//! PDF reading never leaves the workspace root.

use std::fs;

use pi_session_context::ProjectOptions;
use pi_session_context::reqllm::PartType;
use pi_session_context::{DocumentSource, WorkspaceDocuments, messages};
use serde_json::json;

use crate::common::{branch, msg};

#[cfg(unix)]
use std::sync::atomic::{AtomicBool, Ordering};

fn pdf_message(paths: &[&str]) -> serde_json::Value {
    let attachments: Vec<_> = paths
        .iter()
        .map(|p| json!({"kind": "pdf", "name": "doc.pdf", "path": p, "pages": 1}))
        .collect();
    msg(json!({"role": "user", "content": "read these", "attachments": attachments}))
}

#[test]
fn paths_escaping_the_root_are_treated_as_gone() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.pdf");
    fs::write(&secret, b"%PDF-secret").unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().join("root");
    fs::create_dir_all(root.join("sub")).unwrap();
    fs::write(root.join("sub/ok.pdf"), b"%PDF-ok").unwrap();
    // `..` that would land on a real file outside, and one that stays inside.
    fs::write(workspace.path().join("beside.pdf"), b"%PDF-beside").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&secret, root.join("link.pdf")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("linkdir")).unwrap();
        // A relative symlink that stays beneath the root is followed; an
        // absolute one is refused even when it points inside (it names the
        // root by a path the file system could swap).
        std::os::unix::fs::symlink("sub/ok.pdf", root.join("inside-link.pdf")).unwrap();
        std::os::unix::fs::symlink(root.join("sub/ok.pdf"), root.join("abs-link.pdf")).unwrap();
    }
    let docs = WorkspaceDocuments::new(&root);
    let secret_abs = secret.to_str().unwrap().to_owned();
    let inside_abs = root.join("sub/ok.pdf").to_str().unwrap().to_owned();
    let escaping = [
        "../beside.pdf",
        "sub/../../beside.pdf",
        secret_abs.as_str(),
        "link.pdf",
        "linkdir/secret.pdf",
        "abs-link.pdf",
    ];
    for path in escaping {
        assert_eq!(docs.size(path), None, "{path} must not be readable");
        assert_eq!(docs.read(path), None, "{path} must not be readable");
    }
    for path in ["sub/ok.pdf", inside_abs.as_str(), "inside-link.pdf"] {
        assert_eq!(
            docs.read(path).as_deref(),
            Some(&b"%PDF-ok"[..]),
            "{path} is inside the root"
        );
    }
    assert_eq!(docs.size("sub"), None, "a directory is not a document");

    let mut paths = escaping.to_vec();
    paths.push("sub/ok.pdf");
    let out = sent_with_pdfs(&docs, &paths);
    let parts = &out[0].content;
    assert_eq!(parts.len(), 1 + escaping.len() + 1);
    for (part, path) in parts[1..].iter().zip(escaping) {
        assert_eq!(
            part.text.as_deref(),
            Some(format!("(doc.pdf is no longer at {path}.)").as_str())
        );
    }
    assert_eq!(parts.last().unwrap().kind, PartType::File);
    let sent = pi_session_context::reqllm::to_canonical_json(&out).to_string();
    assert!(!sent.contains(&base64_of(b"%PDF-secret")));
    assert!(!sent.contains(&base64_of(b"%PDF-beside")));
}

/// The req_llm messages of one user message attaching `paths`, with PDFs read from `docs`.
fn sent_with_pdfs(
    docs: &WorkspaceDocuments,
    paths: &[&str],
) -> Vec<pi_session_context::reqllm::Message> {
    let entries = branch(vec![pdf_message(paths)]);
    let options = ProjectOptions {
        inputs: "text,pdf".parse().unwrap(),
        documents: docs,
        blobs: None,
        ..ProjectOptions::default()
    };
    messages(&entries, &options)
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn only_files_that_are_pdfs_are_sent_as_pdfs() {
    let workspace = tempfile::tempdir().unwrap();
    fs::write(workspace.path().join("real.pdf"), b"%PDF-1.7 real").unwrap();
    fs::write(
        workspace.path().join("key.pdf"),
        b"-----BEGIN OPENSSH PRIVATE KEY-----",
    )
    .unwrap();
    let docs = WorkspaceDocuments::new(workspace.path());
    let out = sent_with_pdfs(&docs, &["key.pdf", "real.pdf"]);
    let parts = &out[0].content;
    assert_eq!(
        parts[1].text.as_deref(),
        Some("(doc.pdf at key.pdf is not a PDF, so it isn't sent.)")
    );
    assert_eq!(parts[2].kind, PartType::File);
    let sent = pi_session_context::reqllm::to_canonical_json(&out).to_string();
    assert!(!sent.contains(&base64_of(b"-----BEGIN OPENSSH PRIVATE KEY-----")));
    assert!(sent.contains(&base64_of(b"%PDF-1.7 real")));
}

/// A directory inside the root is swapped for a symlink to a directory
/// outside it, over and over, while documents are read through it. A source
/// that checks a path and then opens it by name again sends the outside file
/// in some rounds; one that opens beneath the root never does.
#[cfg(unix)]
#[test]
fn a_racing_symlink_swap_never_reads_outside_the_root() {
    const ROUNDS: usize = 20_000;
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir(outside.path().join("d")).unwrap();
    fs::write(outside.path().join("d/doc.pdf"), b"%PDF-outside secret").unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().to_path_buf();
    fs::create_dir(root.join("d")).unwrap();
    fs::write(root.join("d/doc.pdf"), b"%PDF-inside").unwrap();
    std::os::unix::fs::symlink(outside.path().join("d"), root.join("link")).unwrap();

    let stop = AtomicBool::new(false);
    let docs = WorkspaceDocuments::new(&root);
    let (inside, outside_reads) = std::thread::scope(|scope| {
        scope.spawn(|| {
            // d: directory → symlink → directory ..., with a moment of
            // neither in between (renames never replace a non-empty directory).
            while !stop.load(Ordering::Relaxed) {
                let _ = fs::rename(root.join("d"), root.join("held"));
                let _ = fs::rename(root.join("link"), root.join("d"));
                let _ = fs::rename(root.join("d"), root.join("link"));
                let _ = fs::rename(root.join("held"), root.join("d"));
            }
        });
        let mut inside = 0usize;
        let mut outside_reads = 0usize;
        for _ in 0..ROUNDS {
            match docs.read("d/doc.pdf").as_deref() {
                Some(b"%PDF-inside") => inside += 1,
                Some(_) => outside_reads += 1,
                None => {}
            }
            if docs.size("d/doc.pdf") == Some(19) {
                outside_reads += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        (inside, outside_reads)
    });
    assert_eq!(
        outside_reads, 0,
        "read the outside file through a swapped symlink"
    );
    // The race really ran: reads went through the directory as well.
    assert!(inside > 0, "never read the inside file");
}
