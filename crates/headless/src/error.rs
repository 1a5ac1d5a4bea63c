//! What stops a headless command, as one type for every frontend: each variant names the input
//! or output at fault, and its message is what the `nes` command prints after `error: `.

use std::path::PathBuf;

use nes::{CartridgeError, PaletteError, StateError};
use nes_movie::fm2::Fm2Error;
use nes_movie::input_schedule::ScheduleFileError;

use crate::limits::ReadError;
use crate::output::OutputError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input file could not be read (missing, unreadable, over its size limit).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// An output file could not be written.
    #[error(transparent)]
    Write(#[from] OutputError),
    #[error("{}: {source}", .path.display())]
    Rom {
        path: PathBuf,
        source: CartridgeError,
    },
    #[error("{}: {source}", .path.display())]
    Palette { path: PathBuf, source: PaletteError },
    #[error("{}: {source}", .path.display())]
    Movie { path: PathBuf, source: Fm2Error },
    #[error("{}: {source}", .path.display())]
    InputSchedule {
        path: PathBuf,
        source: ScheduleFileError,
    },
    #[error("{}: {source}", .path.display())]
    State { path: PathBuf, source: StateError },
    /// A folder the run needs could not be made or entered.
    #[error("cannot {action} {}: {source}", .path.display())]
    Folder {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A Lua script could not be started.
    #[error("lua: {0}")]
    ScriptLoad(#[from] nes_lua::LoadError),
    #[error(transparent)]
    Watchdog(#[from] nes_lua::WatchdogError),
    /// A script failed where the command cannot go on without it (`nes bench --lua`).
    #[error("lua error: {0}")]
    Script(String),
    /// Options that cannot all hold (a capture past the last frame, a state past it).
    #[error("{0}")]
    Options(String),
    /// A sweep could not start or finish (its report says which ROM and why).
    #[error("{0}")]
    Sweep(String),
}
