//! The watchdog: stops a script that runs too long without yielding to the emulator.
//!
//! FCEUX freezes for good on `while true do end` (in the main chunk, a memory hook or any
//! callback). With a limit set ([`crate::LuaHost::set_watchdog`]), every host entry (the main
//! coroutine's slice up to its next `emu.frameadvance()`, one callback or hook call) gets that
//! much wall-clock time; past it the running Lua code raises
//! `FILE:LINE: stopped by the watchdog: ...` and the script is stopped like any script error,
//! while the emulator goes on.
//!
//! The clock is read from a Lua count hook every [`CHECK_EVERY`] VM instructions, and by the
//! API functions that loop in Rust on the script's behalf (`emu.exec_count`, `emu.exec_time`),
//! which run no Lua instruction while they loop over a C function. Once it has fired, every
//! later check fires again until the entry ends, so a script that catches the error (`pcall`
//! in a loop) cannot go on; the `pcall`/`xpcall`/`coroutine.resume` wrappers also let it
//! through, as they let `os.exit` through.
//!
//! Costs and limits (in the README too): the count hook makes PUC Lua's interpreter test and
//! decrement its counter at every instruction, some 12% more machine instructions for an
//! interpreter-bound script (callgrind on `tests/lua/bench_search.lua`), which is why the
//! watchdog is off unless asked for. A script can replace the hook with `debug.sethook`.
//! LuaJIT calls count hooks only from its interpreter, never from the machine code it compiles
//! hot loops to: there the JIT profiler brings compiled loops back (see `luajit` below), as
//! long as this Lua state holds LuaJIT's one profiler of the process (about 1% more machine
//! instructions on `bench_search.lua`, callgrind).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::{HookTriggers, Lua, VmState};

/// VM instructions between two looks at the clock: PUC Lua runs some 10^8 simple instructions
/// a second, so the watchdog reacts within a fraction of a millisecond while the hook calls
/// themselves (a Rust call and a clock read, some 100 ns) cost well under 1% of a tight loop.
/// (The counting costs more, and the same at any interval: see the module docs.)
const CHECK_EVERY: u32 = 10_000;

/// The watchdog's clock for the current host entry.
#[derive(Debug, Default)]
pub(crate) struct Watchdog {
    /// The time an entry may run; `None`: no watchdog (FCEUX's behaviour).
    limit: Cell<Option<Duration>>,
    /// Host entries in progress: an entry inside another (a hook fired while the host lends
    /// the machine) runs on the outer one's clock.
    depth: Cell<u32>,
    /// When the outermost entry in progress must have yielded.
    deadline: Cell<Option<Instant>>,
    /// The deadline passed during the current (or, between entries, the last) entry.
    fired: Cell<bool>,
    /// LuaJIT: the profiler set the count hook to every instruction (see [`settle`]).
    hurried: Cell<bool>,
    /// The error of the entry the watchdog stopped, raised again at every later check until
    /// the entry ends (a new one at each would name the code that handles the first, such as
    /// the `pcall` wrapper letting it through).
    message: std::cell::RefCell<String>,
}

impl Watchdog {
    /// A host entry begins (see [`crate::machine::lend`]).
    pub(crate) fn enter(&self) {
        let depth = self.depth.get();
        self.depth.set(depth.saturating_add(1));
        if depth == 0 {
            self.fired.set(false);
            // A limit too large to add to now is no limit.
            let deadline = self
                .limit
                .get()
                .and_then(|limit| Instant::now().checked_add(limit));
            self.deadline.set(deadline);
        }
    }

    /// The entry begun by the matching [`Watchdog::enter`] ends: the script yielded.
    pub(crate) fn leave(&self) {
        let depth = self.depth.get().saturating_sub(1);
        self.depth.set(depth);
        if depth == 0 {
            self.deadline.set(None);
        }
    }

    /// Whether the watchdog stopped the current (or last) entry.
    pub(crate) fn fired(&self) -> bool {
        self.fired.get()
    }

    /// The error to raise now, if the running entry is over its time (or was already
    /// stopped); `at` gives the position to report (`file:line: `), asked for only then.
    fn overdue(&self, at: impl FnOnce() -> String) -> Option<mlua::Error> {
        let deadline = self.deadline.get()?;
        if !self.fired.get() {
            if Instant::now() < deadline {
                return None;
            }
            self.fired.set(true);
            let seconds = self.limit.get().unwrap_or_default().as_secs_f64();
            *self.message.borrow_mut() = format!(
                "{}stopped by the watchdog: the script ran for {seconds} s without yielding to \
                 the emulator (emu.frameadvance() or the end of a callback)",
                at()
            );
        }
        Some(mlua::Error::runtime(self.message.borrow().clone()))
    }
}

/// Set (or, with `None`, remove) the time limit and the count hook that enforces it. The hook
/// is a global one: it applies to the main state and to every thread created after this call
/// (mlua's threads, and the coroutines PUC Lua 5.1 creates inherit their creator's hook).
pub(crate) fn configure(lua: &Lua, watchdog: &Rc<Watchdog>, limit: Option<Duration>) {
    watchdog.limit.set(limit.filter(|limit| !limit.is_zero()));
    let on = watchdog.limit.get().is_some();
    if on {
        set_hook(lua, watchdog, CHECK_EVERY);
    } else {
        lua.remove_global_hook();
        lua.remove_hook();
    }
    #[cfg(feature = "luajit")]
    // Without the profiler the watchdog still works in LuaJIT's interpreter (see above).
    let _ = luajit::profile(lua, watchdog, on);
}

/// The count hook, every `count` instructions.
fn set_hook(lua: &Lua, watchdog: &Rc<Watchdog>, count: u32) {
    let dog = watchdog.clone();
    let triggers = HookTriggers::new().every_nth_instruction(count);
    let set = lua.set_global_hook(triggers, move |_, debug| {
        let at = || match (debug.source().short_src, debug.current_line()) {
            (Some(source), Some(line)) => format!("{source}:{line}: "),
            _ => String::new(),
        };
        match dog.overdue(at) {
            Some(error) => Err(error),
            None => Ok(VmState::Continue),
        }
    });
    // Setting a hook fails only when Lua is out of memory; the script then runs unwatched,
    // as without a limit.
    drop(set);
}

/// After a host entry: put the count hook back to its pace if the LuaJIT profiler hurried it.
pub(crate) fn settle(lua: &Lua, watchdog: &Rc<Watchdog>) {
    if watchdog.hurried.replace(false) && watchdog.limit.get().is_some() {
        set_hook(lua, watchdog, CHECK_EVERY);
    }
}

/// LuaJIT calls count hooks only from its interpreter, never from the machine code it compiles
/// hot loops to. Its profiler reaches compiled code, though: in its line mode every trace
/// checks for a pending profiler tick where the source line changes, and leaves for the
/// interpreter when there is one. So the watchdog runs the profiler (a timer signal every
/// [`luajit::TICK`] of CPU time), and a tick past the deadline sets the count hook to fire at
/// the very next instruction the interpreter runs, which is the first after the trace left.
///
/// LuaJIT has one profiler per process: a second Lua state cannot start it while another
/// holds it (the app runs one script at a time; the state's close stops it).
#[cfg(feature = "luajit")]
mod luajit {
    use super::*;

    /// The profiler's interval, in its `i<milliseconds>` notation.
    pub(super) const TICK: &str = "i10";

    pub(super) fn profile(lua: &Lua, watchdog: &Rc<Watchdog>, on: bool) -> mlua::Result<()> {
        let require: mlua::Function = lua.globals().raw_get("require")?;
        let profile: mlua::Table = require.call("jit.profile")?;
        if !on {
            return profile.get::<mlua::Function>("stop")?.call(());
        }
        let dog = watchdog.clone();
        // The profiler exits the process if its callback raises an error: this one never does.
        let tick = lua.create_function(move |lua, _: mlua::MultiValue| {
            let overdue = dog
                .deadline
                .get()
                .is_some_and(|deadline| Instant::now() >= deadline);
            if overdue && !dog.hurried.replace(true) {
                set_hook(lua, &dog, 1);
            }
            Ok(())
        })?;
        profile
            .get::<mlua::Function>("start")?
            .call((format!("l{TICK}"), tick))
    }
}

/// For API functions that loop in Rust: the watchdog's error if the entry is over its time.
/// The error names the API function's caller's position.
pub(crate) fn check(lua: &Lua) -> mlua::Result<()> {
    let dog = lua
        .app_data_ref::<Rc<Watchdog>>()
        .map(|dog| Rc::clone(&dog));
    match dog {
        Some(dog) => match dog.overdue(|| crate::api::location(lua)) {
            Some(error) => Err(error),
            None => Ok(()),
        },
        None => Ok(()),
    }
}

/// Whether the watchdog has stopped the running entry (the error wrappers let its error
/// through any `pcall`).
pub(crate) fn stopping(lua: &Lua) -> bool {
    lua.app_data_ref::<Rc<Watchdog>>()
        .is_some_and(|dog| dog.deadline.get().is_some() && dog.fired.get())
}

/// The limit for a number of seconds as a user gives it (`--lua-watchdog`, a config file):
/// 0 is none; negative, not-a-number and absurdly large values are refused.
pub fn watchdog_limit(seconds: f64) -> Result<Option<Duration>, WatchdogError> {
    if seconds.is_nan() || seconds < 0.0 {
        return Err(WatchdogError::NotPositive(seconds));
    }
    let limit =
        Duration::try_from_secs_f64(seconds).map_err(|_| WatchdogError::TooLarge(seconds))?;
    Ok((!limit.is_zero()).then_some(limit))
}

/// A watchdog time [`watchdog_limit`] refuses.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum WatchdogError {
    #[error("the Lua watchdog's time must be 0 (off) or a positive number of seconds, not {0}")]
    NotPositive(f64),
    #[error("the Lua watchdog's time of {0} seconds is too large")]
    TooLarge(f64),
}

/// A command-line `SECONDS` for the watchdog (clap's value parser): checked by
/// [`watchdog_limit`].
pub fn parse_watchdog_seconds(text: &str) -> Result<f64, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    watchdog_limit(seconds).map_err(|error| error.to_string())?;
    Ok(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_given_seconds() {
        assert_eq!(watchdog_limit(0.0), Ok(None));
        assert_eq!(watchdog_limit(2.5), Ok(Some(Duration::from_millis(2500))));
        for bad in [-1.0, f64::NAN, f64::INFINITY, 1e300] {
            assert!(watchdog_limit(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_watchdog_seconds(" 5 "), Ok(5.0));
        assert!(parse_watchdog_seconds("five").is_err());
        assert!(parse_watchdog_seconds("-0.5").is_err());
    }
}
