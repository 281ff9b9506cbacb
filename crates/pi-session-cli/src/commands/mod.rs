//! One module per subcommand (and `write`, what the write commands share).

pub mod append;
pub mod cat;
pub mod check;
pub mod context;
pub mod fork;
pub mod import;
pub mod grep;
pub mod ls;
pub mod repair;
pub mod migrate;
pub mod export;
pub mod ls;
pub mod serve;
pub mod stats;
pub mod tree;
pub mod write;
pub mod usage;
