//! Library side of the `nes` command, shared with the workspace test suites.

pub mod battery;
pub mod capture;
pub mod hardware;
pub mod limits;
pub mod output;
pub mod power_on;
pub mod stdout;
pub mod sweep;
pub mod test_roms;

/// The message of a caught panic (`panic!("...")` gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
