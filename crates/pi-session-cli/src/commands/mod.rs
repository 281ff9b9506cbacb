//! One module per subcommand (and `write`, what the write commands share).

pub mod append;
pub mod cat;
pub mod check;
pub mod context;
pub mod export;
pub mod fork;
pub mod grep;
pub mod import;
pub mod ls;
pub mod manage;
pub mod migrate;
pub mod repair;
pub mod serve;
pub mod stats;
pub mod tree;
pub mod usage;
pub mod write;
