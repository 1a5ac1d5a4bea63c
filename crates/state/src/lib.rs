//! Save states are untrusted input: a state with a valid checksum can still hold values no
//! chip could ever be in (a crafted file, another build's layout). Every chip checks the
//! fields it decoded before the console accepts them, with the helpers here, and reports the
//! first problem as an [`InvalidState`], which the console passes on as its own typed error.
//!
//! A leaf crate of its own so that the CPU, PPU, APU and cartridge crates, which know nothing
//! of each other, share one vocabulary and one wording for these errors.

use std::fmt::Display;
use std::ops::RangeInclusive;

/// Why a decoded save state cannot be loaded. The message names the chip and the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidState {
    /// A field holds a value outside the range the hardware can reach.
    #[error("{field} {value} is out of range {range}")]
    OutOfRange {
        field: String,
        value: String,
        range: String,
    },
    /// Values derived from other fields disagree with them (`what` names the fact).
    #[error("{0} is inconsistent")]
    Inconsistent(String),
    /// Any other state no chip could be in, described in full.
    #[error("{0}")]
    Impossible(String),
}

impl InvalidState {
    /// [`InvalidState::Impossible`] with the message `what`.
    pub fn impossible(what: impl Into<String>) -> InvalidState {
        InvalidState::Impossible(what.into())
    }
}

/// `Ok` when `value` of `field` lies in `range`, else the error naming the field, its value and
/// the range.
pub fn check_range<T: PartialOrd + Display>(
    field: &str,
    value: T,
    range: RangeInclusive<T>,
) -> Result<(), InvalidState> {
    if range.contains(&value) {
        Ok(())
    } else {
        Err(InvalidState::OutOfRange {
            field: field.to_owned(),
            value: value.to_string(),
            range: format!("{}..={}", range.start(), range.end()),
        })
    }
}

/// `Ok` when the fact `what` (about derived values) holds.
pub fn check_consistent(holds: bool, what: &str) -> Result<(), InvalidState> {
    if holds {
        Ok(())
    } else {
        Err(InvalidState::Inconsistent(what.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_field_value_and_range() {
        assert_eq!(check_range("PPU dot", 5u16, 0..=340), Ok(()));
        assert_eq!(
            check_range("PPU dot", 341u16, 0..=340)
                .unwrap_err()
                .to_string(),
            "PPU dot 341 is out of range 0..=340"
        );
        assert_eq!(
            check_consistent(false, "APU pulse 1 sweep mute flag")
                .unwrap_err()
                .to_string(),
            "APU pulse 1 sweep mute flag is inconsistent"
        );
        assert!(check_consistent(true, "anything").is_ok());
        assert_eq!(
            InvalidState::impossible("the board is another kind").to_string(),
            "the board is another kind"
        );
    }
}
