//! Controller input that is not a person at a keyboard: FCEUX's FM2 movies ([`fm2`]), the
//! `--press FRAME:BUTTONS[:HOLD]` schedules of headless runs ([`input_schedule`]), and the
//! rewind history of save states ([`Rewind`]). The console itself (crate `nes`) only knows
//! buttons held per port and power/reset; this crate turns files and histories into those.

pub mod fm2;
pub mod input_schedule;
mod rewind;

pub use rewind::Rewind;
