//! omp's rules in this crate: its `convertToLlm` and the steps of its agent loop around it
//! ([`convert`]), the truncation notice of tool output (`output_notice`, [`crate::format_output_notice`]) and the prompt
//! templates its messages are rendered with ([`prompt`]).

pub mod convert;
pub(crate) mod output_notice;
pub mod prompt;
