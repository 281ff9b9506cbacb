//! [`TlsRedis`]: a throwaway TLS-only `redis-server` for the `rediss://` tests, with a CA and
//! server certificate `openssl` makes in a temporary folder.
//!
//! Only tests call this: a failure to set the server up panics, failing the test that asked.
#![allow(
    clippy::expect_used,
    reason = "test support: a setup failure is the calling test's failure"
)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A TLS-only `redis-server` on 127.0.0.1, stopped (and its folder removed) on drop.
#[derive(Debug)]
pub struct TlsRedis {
    child: Child,
    /// The TLS port.
    pub port: u16,
    /// The PEM file of the CA that signed the server's certificate.
    pub ca: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl TlsRedis {
    /// Starts one; `None` with a printed `SKIPPED:` notice when `openssl` or `redis-server` is
    /// missing (a failure instead under `CI=true`, where `.ci/run` installs both).
    ///
    /// # Panics
    /// When a certificate cannot be made or the server does not start within 10 s.
    pub fn start() -> Option<Self> {
        if !crate::have_program("openssl", "the Redis TLS test")
            || !crate::have_program("redis-server", "the Redis TLS test")
        {
            return None;
        }
        let dir = tempfile::tempdir().expect("a temporary folder");
        let d = dir.path();
        let ca = "-days 2 -subj /CN=pi-session-test-CA -keyout ca.key -out ca.crt";
        openssl(d, &format!("req -x509 -newkey rsa:2048 -nodes {ca}"));
        let csr = "-subj /CN=127.0.0.1 -keyout server.key -out server.csr";
        openssl(d, &format!("req -newkey rsa:2048 -nodes {csr}"));
        std::fs::write(
            d.join("ext.cnf"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
        )
        .expect("the certificate's extensions");
        let sign = "-CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile ext.cnf";
        openssl(
            d,
            &format!("x509 -req -in server.csr -out server.crt {sign}"),
        );
        let port = free_port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                "0",
                "--tls-port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .args([
                "--tls-cert-file",
                "server.crt",
                "--tls-key-file",
                "server.key",
            ])
            .args(["--tls-ca-cert-file", "ca.crt", "--tls-auth-clients", "no"])
            .args(["--save", "", "--appendonly", "no"])
            .current_dir(d)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let server = Self {
            child,
            port,
            ca: d.join("ca.crt"),
            _dir: dir,
        };
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the TLS redis-server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }
}

/// A port nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Runs `openssl` with `args` (split at spaces) in `dir`.
fn openssl(dir: &Path, args: &str) {
    let out = Command::new("openssl")
        .args(args.split(' '))
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {args}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
