//! Library side of the `nes` command, shared with the workspace test suites.

pub mod battery;
pub mod capture;
pub mod output;
pub mod power_on;
pub mod sweep;
pub mod test_roms;
