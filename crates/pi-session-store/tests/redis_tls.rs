//! Connecting to Redis: `rediss://` (TLS, feature `redis-tls`) and no password in any error.
//!
//! With the feature, a throwaway TLS `redis-server` is started on a free port with a CA and
//! server certificate made by `openssl` in a temporary folder (`TlsRedis`; skipped with a notice
//! when either program is missing, failing instead under `CI=true`).

use crate::common::redis_store;
use pi_session_store::{RedisOptions, RedisStore};
use pi_session_test_support::tls_redis::free_port;

const SECRET: &str = "s3cret-do-not-print";

fn refused(url: &str, options: RedisOptions) -> String {
    match RedisStore::connect(url, options) {
        Ok(store) => panic!("{url}: connected to {store:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn no_error_shows_the_password() {
    let port = free_port();
    for url in [
        format!("redis://user:{SECRET}@127.0.0.1:{port}/0"),
        format!("redis://:{SECRET}@127.0.0.1:{port}/0"),
        format!("rediss://user:{SECRET}@127.0.0.1:{port}/0"),
        format!("redis://user:{SECRET}@127.0.0.1:{port}/not-a-db"),
        format!("http://user:{SECRET}@127.0.0.1:{port}/0"),
    ] {
        let message = refused(&url, RedisOptions::default());
        assert!(!message.contains(SECRET), "{message}");
        if url.starts_with("redis") && !url.ends_with("not-a-db") {
            assert!(message.contains(":***@127.0.0.1"), "{message}");
        }
    }
    // A server that refuses the password (this one has none set) answers without echoing it.
    let Some(_) = redis_store() else { return };
    let url = std::env::var("PI_SESSION_TEST_REDIS").unwrap();
    let with_password = url.replacen("redis://", &format!("redis://:{SECRET}@"), 1);
    let message = refused(&with_password, RedisOptions::default());
    assert!(!message.contains(SECRET), "{message}");
    assert!(message.contains(":***@"), "{message}");
}

#[cfg(not(feature = "redis-tls"))]
#[test]
fn a_rediss_url_without_the_feature_names_the_feature() {
    let message = refused(
        &format!("rediss://:{SECRET}@127.0.0.1:6380/0"),
        RedisOptions::default(),
    );
    assert!(message.contains("`redis-tls`"), "{message}");
    assert!(
        message.contains("rediss://:***@127.0.0.1:6380/0"),
        "{message}"
    );
}

#[cfg(feature = "redis-tls")]
mod tls {
    use super::*;
    use pi_session_store::{Store, StoreError, WriterOptions, new_header};
    use pi_session_test_support::tls_redis::TlsRedis;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    #[test]
    fn a_rediss_url_reads_and_writes_sessions_over_tls() {
        let Some(server) = TlsRedis::start() else {
            return;
        };
        let url = format!("rediss://127.0.0.1:{}/0", server.port);
        let options = RedisOptions {
            prefix: format!("pi-session-test:{}:", uuid::Uuid::new_v4().simple()),
            tls_ca_file: Some(server.ca.clone()),
            ..RedisOptions::default()
        };
        let redis = RedisStore::connect(&url, options).unwrap();
        let store = Store::keyed(redis);
        let path = Path::new("/w/s.jsonl");
        let mut writer = store.create_at(path, new_header("/w"), WriterOptions::default());
        let written = writer
            .append(crate::common::entry(
                "label",
                &[("label", "over TLS".into())],
            ))
            .unwrap();
        let (session, diagnostics) = store.open(path).unwrap();
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(session.entries().unwrap(), vec![written]);
        let Store::Keyed(keyed) = &store else {
            unreachable!()
        };
        assert!(keyed.stat("/w/s.jsonl").unwrap().is_some());

        // Plain redis:// to the TLS port, and TLS without trusting the test CA, both fail
        // clearly and without the password.
        let plain = format!("redis://:{SECRET}@127.0.0.1:{}/0", server.port);
        let quick = RedisOptions {
            io_timeout: Duration::from_secs(2),
            ..RedisOptions::default()
        };
        let message = refused(&plain, quick);
        assert!(!message.contains(SECRET), "{message}");
        let untrusted = format!("rediss://:{SECRET}@127.0.0.1:{}/0", server.port);
        let message = refused(&untrusted, RedisOptions::default());
        assert!(!message.contains(SECRET), "{message}");
        assert!(message.to_lowercase().contains("certificate"), "{message}");
        // A CA file that is not there is named.
        let missing = RedisOptions {
            tls_ca_file: Some(PathBuf::from("/nonexistent/ca.pem")),
            ..RedisOptions::default()
        };
        let message = refused(&untrusted, missing);
        assert!(message.contains("/nonexistent/ca.pem"), "{message}");
        assert!(!message.contains(SECRET), "{message}");
    }

    #[test]
    fn a_failed_tls_store_is_an_io_error() {
        let error = RedisStore::connect(
            &format!("rediss://127.0.0.1:{}/0", free_port()),
            RedisOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(error, StoreError::Io { .. }), "{error}");
    }
}
