//! pi's rules in this crate, for every [`PiRelease`](super::PiRelease): its
//! `buildSessionContext` ([`context`]).

pub mod context;
