//! What stops a headless command, as one type for every frontend: each variant names the input
//! or output at fault, and its message is what the `nes` command prints after `error: `.

use std::path::PathBuf;

use nes::{CartridgeError, PaletteError, StateError};
use nes_movie::fm2::Fm2Error;
use nes_movie::input_schedule::ScheduleFileError;

use crate::limits::ReadError;
use crate::output::OutputError;
use crate::sweep::InputSpecError;

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
    /// `nes sweep --roms` names no ROM.
    #[error("no ROMs (*.nes) found in {}", .0.display())]
    NoRoms(PathBuf),
    /// A sweep's `--input-file` is not a valid input specification.
    #[error("{}: {source}", .path.display())]
    SweepInput {
        path: PathBuf,
        source: InputSpecError,
    },
    /// `nes sweep --compare` names a folder whose `sweep.json` is not a sweep report.
    #[error("{} is not a sweep report: {source}", .path.display())]
    NotASweepReport {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// A sweep report or record could not be encoded as JSON.
    #[error("cannot encode the sweep report: {0}")]
    EncodeReport(serde_json::Error),
    /// A sweep cannot start its worker processes: this program's own path is unknown.
    #[error("cannot find this program to start sweep workers: {0}")]
    WorkerProgram(std::io::Error),
    /// `nes sweep-worker` got no request, or one it cannot read.
    #[error("cannot read the sweep worker's request: {0}")]
    WorkerRequest(String),
}
