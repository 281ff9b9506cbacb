//! JavaScript value semantics that the real implementations rely on
//! (truthiness, `??`, `===`, template literals, `String.prototype.trim`,
//! `new Date(x).getTime()`).
//!
//! The rules live in [`pi_session_types::js`]; this module re-exports them so
//! that `pi_session_tree::js::…` keeps working. A JavaScript `undefined` (a
//! missing key) is `None` throughout.

pub use pi_session_types::js::*;
