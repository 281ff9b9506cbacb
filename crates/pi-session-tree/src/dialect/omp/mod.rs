//! omp's rules in this crate, for every [`OmpRelease`](super::OmpRelease): its
//! `buildSessionContext` ([`context`]) with the context notes it prepends ([`notes`], rendered
//! with omp's prompt formatter, [`prompt`]), snapcompact's frames ([`snapcompact`]) and the
//! blob store its entries point into ([`blobs`]).

pub mod blobs;
pub mod context;
pub mod notes;
pub mod prompt;
pub mod snapcompact;
