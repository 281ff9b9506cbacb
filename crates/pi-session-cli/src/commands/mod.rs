//! One module per subcommand.

pub mod cat;
pub mod check;
pub mod context;
pub mod export;
pub mod ls;
pub mod serve;
pub mod stats;
pub mod tree;
