//! One module per subcommand.

pub mod cat;
pub mod check;
pub mod context;
pub mod grep;
pub mod ls;
pub mod stats;
pub mod tree;
pub mod usage;
