//! The one `unsafe` call in this crate: creating the Lua state with every standard library.
//!
//! FCEUX scripts get every Lua 5.1 library, `debug` included (scripts use `debug.traceback`
//! and `debug.getinfo`). mlua only opens `debug` through `Lua::unsafe_new`, because `debug`
//! lets Lua code break mlua's own invariants (e.g. by editing upvalues of its callbacks); the
//! scripts run here are the user's own, which is the trust FCEUX gives them too. Nothing else
//! in the crate uses `unsafe`.

use mlua::Lua;

/// A Lua state with all standard libraries open, `debug` included.
#[allow(unsafe_code)]
pub(crate) fn lua_with_all_libraries() -> Lua {
    // SAFETY: `unsafe_new` is only unsafe because the `debug` library it opens can subvert
    // mlua's memory-safety guarantees from Lua code; we accept that for user scripts, as FCEUX
    // does. The state is otherwise used through mlua's safe API only.
    unsafe { Lua::unsafe_new() }
}
