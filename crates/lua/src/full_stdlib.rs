//! The one `unsafe` call in this crate: creating the Lua state with FCEUX's libraries.
//!
//! FCEUX 2.6.5 opens Lua 5.1's standard libraries (`luaL_openlibs`): base (with coroutine),
//! package, table, io, os, string, math and debug (scripts use `debug.traceback` and
//! `debug.getinfo`), and adds its own `bit`. mlua only opens `debug` through
//! `Lua::unsafe_new_with`, because `debug` lets Lua code break mlua's own invariants (e.g. by
//! editing upvalues of its callbacks); the scripts run here are the user's own, which is the
//! trust FCEUX gives them too. Nothing else in the crate uses `unsafe`.
//!
//! The LuaJIT build opens no more than that: not `ffi` (raw memory access and native calls,
//! which FCEUX's Lua never had) and no `jit` global. LuaJIT's own `bit` is LuaBitOp, the
//! library FCEUX's `bit` copies.

use mlua::{Lua, LuaOptions, StdLib};

/// FCEUX's standard libraries (see the module docs).
fn fceux_libraries() -> StdLib {
    let libs = StdLib::TABLE
        | StdLib::IO
        | StdLib::OS
        | StdLib::STRING
        | StdLib::MATH
        | StdLib::PACKAGE
        | StdLib::DEBUG;
    // `jit` is opened for its side effect, switching the compiler on, and then hidden.
    #[cfg(feature = "luajit")]
    let libs = libs | StdLib::BIT | StdLib::JIT;
    libs
}

/// A Lua state with FCEUX's libraries open, `debug` included.
#[allow(unsafe_code)]
pub(crate) fn lua_with_fceux_libraries() -> mlua::Result<Lua> {
    // SAFETY: `unsafe_new_with` is only unsafe because the `debug` library it opens can
    // subvert mlua's memory-safety guarantees from Lua code; we accept that for user scripts,
    // as FCEUX does. The state is otherwise used through mlua's safe API only.
    let lua = unsafe { Lua::unsafe_new_with(fceux_libraries(), LuaOptions::default()) };
    #[cfg(feature = "luajit")]
    {
        lua.globals().raw_set("jit", mlua::Value::Nil)?;
        let loaded: mlua::Table = lua.named_registry_value("_LOADED")?;
        loaded.raw_set("jit", mlua::Value::Nil)?;
    }
    Ok(lua)
}
