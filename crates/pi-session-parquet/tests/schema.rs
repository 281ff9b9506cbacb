//! `SCHEMA.md` is the documentation of the tables, generated from `TABLES`: it must match.

use std::path::Path;

#[test]
fn schema_md_matches_the_tables() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("SCHEMA.md");
    let expected = pi_session_parquet::schema_markdown();
    if std::env::var_os("PI_SESSION_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "{} is out of date; regenerate it with \
         PI_SESSION_UPDATE_SCHEMA=1 cargo test -p pi-session-parquet --test schema",
        path.display()
    );
}

#[test]
fn every_table_has_a_parquet_schema_and_unique_columns() {
    for table in pi_session_parquet::TABLES {
        let text = table.message_type();
        let parsed = parquet::schema::parser::parse_message_type(&text).unwrap();
        assert_eq!(parsed.get_fields().len(), table.columns.len(), "{text}");
        let mut names: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            table.columns.len(),
            "{}: duplicate column",
            table.name
        );
        assert!(table.columns.iter().all(|c| !c.doc.is_empty()));
    }
}
