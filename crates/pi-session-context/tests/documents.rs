//! PDF reading never leaves the workspace root.

use std::fs;

use pi_session_context::reqllm::PartType;
use pi_session_context::rho::Options;
use pi_session_context::{DocumentSource, WorkspaceDocuments, messages};
use serde_json::json;

use crate::common::{branch, msg};

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
    fs::write(&secret, b"%PDF secret").unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().join("root");
    fs::create_dir_all(root.join("sub")).unwrap();
    fs::write(root.join("sub/ok.pdf"), b"%PDF ok").unwrap();
    // `..` that would land on a real file outside, and one that stays inside.
    fs::write(workspace.path().join("beside.pdf"), b"%PDF beside").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&secret, root.join("link.pdf")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("linkdir")).unwrap();
        std::os::unix::fs::symlink(root.join("sub/ok.pdf"), root.join("inside-link.pdf")).unwrap();
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
    ];
    for path in escaping {
        assert_eq!(docs.size(path), None, "{path} must not be readable");
        assert_eq!(docs.read(path), None, "{path} must not be readable");
    }
    for path in ["sub/ok.pdf", inside_abs.as_str(), "inside-link.pdf"] {
        assert_eq!(
            docs.read(path).as_deref(),
            Some(&b"%PDF ok"[..]),
            "{path} is inside the root"
        );
    }
    assert_eq!(docs.size("sub"), None, "a directory is not a document");

    let mut paths = escaping.to_vec();
    paths.push("sub/ok.pdf");
    let entries = branch(vec![pdf_message(&paths)]);
    let options = Options {
        inputs: "text,pdf".parse().unwrap(),
        documents: &docs,
        blobs: None,
    };
    let out = messages(&entries, &options);
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
    assert!(!sent.contains(&base64_of(b"%PDF secret")));
    assert!(!sent.contains(&base64_of(b"%PDF beside")));
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
