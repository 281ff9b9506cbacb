//! `--store URL [--prefix P]`: where the sessions a command reads and writes are kept. One
//! option set shared by every command that takes a session, flattened into its arguments, so a
//! command changes by a line: `args.store.open()?` gives the [`Store`] to open FILE in.

use clap::Args;
use pi_session::store::{RedisOptions, RedisStore, Store};

use crate::failure::Failure;

// Where sessions are kept (default: the file system). Not a doc comment: clap would show it as
// the description of every subcommand that flattens these in (see `Command` in main.rs).
#[derive(Debug, Clone, Default, Args)]
pub struct StoreArgs {
    /// Keep sessions in Redis (or Valkey) as omp's Redis session storage does, shared with omp
    /// hosts: redis://[USER:PASSWORD@]HOST:PORT/DB, or rediss://… for TLS (trusting the
    /// system's CA roots; SSL_CERT_FILE names others). FILE (and a folder) is then the
    /// session's path as omp names it. Default: the file system.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// The Redis key prefix (omp's default: omp:sessions:).
    #[arg(long, value_name = "P")]
    pub prefix: Option<String>,
}

impl StoreArgs {
    /// The store named, connected. `--prefix` without `--store` is refused.
    pub fn open(&self) -> Result<Store, Failure> {
        let Some(url) = &self.store else {
            if self.prefix.is_some() {
                return Err(Failure::new(
                    "--prefix applies to a Redis store; add --store redis://HOST:PORT/DB",
                ));
            }
            return Ok(Store::Files);
        };
        let mut options = RedisOptions::default();
        if let Some(prefix) = &self.prefix {
            options.prefix.clone_from(prefix);
        }
        let store = RedisStore::connect(url, options)?;
        Ok(Store::keyed(store))
    }

    /// Whether sessions are files (no `--store`).
    pub fn is_files(&self) -> bool {
        self.store.is_none()
    }
}
