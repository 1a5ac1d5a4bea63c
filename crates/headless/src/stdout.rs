//! Standard output that a closed reader cannot turn into a panic.
//!
//! `println!` panics when a write fails, and a Rust program gets a write error (EPIPE), not
//! the SIGPIPE signal, when its reader goes away: `nes trace ROM | head -1` used to end in a
//! backtrace. Everything the commands print to stdout goes through [`outln!`] / [`out!`] (or
//! [`Stdout`]) instead, with this convention:
//!
//! - once the reader is gone, further output is dropped without a word; a command whose only
//!   work is printing (`trace`) stops at once, the others finish their work (their files are
//!   still written: a run cut short would leave them stale);
//! - the process then exits with status [`CLOSED_PIPE_STATUS`] (141 = 128 + SIGPIPE, what the
//!   shell reports for a C tool such as `cat` killed by SIGPIPE), so `set -o pipefail` scripts
//!   see the cut and others ignore it as they ignore `cat`'s;
//! - any other write error (stdout on a full disk) is reported on stderr once the command is
//!   done, with exit status 2, like the commands' other errors.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The exit status after stdout's reader went away: 128 + SIGPIPE (13).
pub const CLOSED_PIPE_STATUS: u8 = 141;

/// Set once a write to stdout failed: nothing more is written.
static STOPPED: AtomicBool = AtomicBool::new(false);
/// The first failure that was not a closed pipe.
static FAILURE: Mutex<Option<String>> = Mutex::new(None);

/// How stdout fared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdoutState {
    /// Everything printed was written.
    Ok,
    /// The reader went away (EPIPE): output was cut short.
    Closed,
    /// Another write error.
    Failed(String),
}

fn record(error: &std::io::Error) {
    STOPPED.store(true, Ordering::SeqCst);
    if error.kind() != std::io::ErrorKind::BrokenPipe {
        let mut failure = FAILURE.lock().unwrap_or_else(|poison| poison.into_inner());
        failure.get_or_insert_with(|| error.to_string());
    }
}

/// Write `bytes` to stdout unless an earlier write failed. Returns whether they were written.
pub fn write_bytes(bytes: &[u8]) -> bool {
    if stopped() {
        return false;
    }
    let result = std::io::stdout().lock().write_all(bytes);
    match result {
        Ok(()) => true,
        Err(error) => {
            record(&error);
            false
        }
    }
}

/// Write formatted text to stdout (see [`write_bytes`]).
pub fn write_fmt(args: fmt::Arguments<'_>) -> bool {
    if stopped() {
        return false;
    }
    let result = std::io::stdout().lock().write_fmt(args);
    match result {
        Ok(()) => true,
        Err(error) => {
            record(&error);
            false
        }
    }
}

/// Flush stdout (it is line-buffered): for output that must be seen at once.
pub fn flush() -> bool {
    if stopped() {
        return false;
    }
    match std::io::stdout().lock().flush() {
        Ok(()) => true,
        Err(error) => {
            record(&error);
            false
        }
    }
}

/// Whether output has stopped (the reader went away, or a write failed): a command that only
/// prints can stop too.
pub fn stopped() -> bool {
    STOPPED.load(Ordering::SeqCst)
}

/// Flush what is left and say how stdout fared, for the exit status.
pub fn finish() -> StdoutState {
    flush();
    if let Some(message) = FAILURE
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .clone()
    {
        return StdoutState::Failed(message);
    }
    if stopped() {
        StdoutState::Closed
    } else {
        StdoutState::Ok
    }
}

/// `print!` that never panics (see the module documentation).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write_fmt(format_args!($($arg)*))
    };
}

/// `println!` that never panics (see the module documentation).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::stdout::write_bytes(b"\n")
    };
    ($($arg:tt)*) => {
        $crate::stdout::write_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Stdout as an [`std::io::Write`] for code that takes a writer: never fails (see the module
/// documentation).
#[derive(Debug, Default, Clone, Copy)]
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        write_bytes(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        flush();
        Ok(())
    }
}
