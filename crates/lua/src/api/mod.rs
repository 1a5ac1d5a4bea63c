//! The FCEUX API tables (`emu`, `memory`, `joypad`, `gui`, `savestate`, `rom`, ...) and the
//! extra globals. Behaviour follows `fceux-lua-api.md`; comments cite its rules where a choice
//! is not obvious.

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{Function, Lua, MultiValue, Table, Value};
use nes::CpuRegisters;
use nes_movie::fm2::Commands;

use crate::format::format_args;
use crate::gui::Rgba;
use crate::machine::with_machine;
use crate::{bitlib, HookKind, MovieMode, PadOverride, Registries, Shared, SpeedMode};

mod emu;
mod globals;
mod gui;
mod joypad;
mod memory;
mod movie;
mod rom;
mod savestate;
mod small;
mod sound;

use emu::{callback_setter, emu_table};
use globals::{exiting_probe, install_bit, install_os_exit, install_print};
use gui::gui_table;
use joypad::joypad_table;
use memory::memory_table;
use movie::movie_table;
use rom::rom_table;
use savestate::savestate_table;
use small::install_small_tables;
use sound::sound_table;

type SharedRef = Rc<RefCell<Shared>>;

/// Sets `table[name]` to a Lua function returning `read` of the shared state: the API's many
/// read-only queries (`emu.framecount`, `movie.playing`, ...).
fn set_getter<T: mlua::IntoLua + 'static>(
    lua: &Lua,
    table: &Table,
    name: &str,
    shared: &SharedRef,
    read: fn(&Shared) -> T,
) -> mlua::Result<()> {
    let s = shared.clone();
    table.set(
        name,
        lua.create_function(move |_, ()| Ok(read(&s.borrow())))?,
    )
}

/// `file:line: ` of the Lua code that called the running API function (luaL_where(L, 1)).
pub(crate) fn location(lua: &Lua) -> String {
    location_at(lua, 1)
}

/// `file:line: ` of the function `level` calls up the stack (1: the API function's caller).
fn location_at(lua: &Lua, level: usize) -> String {
    lua.inspect_stack(level, |debug| {
        let line = debug.current_line()?;
        let source = debug.source().short_src?.into_owned();
        Some(format!("{source}:{line}: "))
    })
    .flatten()
    .unwrap_or_default()
}

/// A Lua error carrying the caller's position, like `luaL_error`.
pub(crate) fn fail(lua: &Lua, message: impl std::fmt::Display) -> mlua::Error {
    mlua::Error::runtime(format!("{}{message}", location(lua)))
}

/// Lua 5.1's name of a value's type (`lua_typename`), as its argument errors print it.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// `luaL_argerror`: "bad argument #N to 'NAME' (MESSAGE)" at the caller's position, where
/// NAME is how the calling code named the function (`'readbyte'` for `memory.readbyte(...)`,
/// `'?'` when it was called by `pcall` or another C function), as FCEUX's API functions,
/// which use the `luaL_check*` functions, report it (tests/fceux/lua/errors.lua). A method
/// call (`obj:f(x)`) does not count `self`.
pub(crate) fn bad_argument(lua: &Lua, position: usize, message: &str) -> mlua::Error {
    let (name, method) = lua
        .inspect_stack(0, |debug| {
            let names = debug.names();
            let name = names.name.map(|n| n.into_owned());
            (name, names.name_what == Some("method"))
        })
        .unwrap_or((None, false));
    let name = name.unwrap_or_else(|| "?".to_owned());
    if method {
        if position == 1 {
            return fail(lua, format!("calling '{name}' on bad self ({message})"));
        }
        return fail(
            lua,
            format!("bad argument #{} to '{name}' ({message})", position - 1),
        );
    }
    fail(
        lua,
        format!("bad argument #{position} to '{name}' ({message})"),
    )
}

/// `luaL_typerror`: argument `position` is not of type `expected`; `got` is `None` when the
/// call passed fewer arguments ("no value", which differs from an explicit `nil`).
pub(crate) fn type_error(
    lua: &Lua,
    got: Option<&Value>,
    position: usize,
    expected: &str,
) -> mlua::Error {
    let got = got.map_or("no value", type_name);
    bad_argument(lua, position, &format!("{expected} expected, got {got}"))
}

/// `luaL_checknumber` of argument `position` (1-based): a number or a string Lua 5.1
/// converts to one (`"0x10"`, `" 12 "`).
pub(crate) fn check_number(lua: &Lua, args: &MultiValue, position: usize) -> mlua::Result<f64> {
    let value = args.get(position - 1);
    match value {
        Some(Value::Integer(i)) => Ok(*i as f64),
        Some(Value::Number(n)) => Ok(*n),
        Some(v @ Value::String(_)) => lua
            .coerce_number(v.clone())?
            .ok_or_else(|| type_error(lua, value, position, "number")),
        _ => Err(type_error(lua, value, position, "number")),
    }
}

/// `luaL_checkinteger`: [`check_number`] truncated toward zero (Lua 5.1's cast on x86-64).
pub(crate) fn check_integer(lua: &Lua, args: &MultiValue, position: usize) -> mlua::Result<i64> {
    Ok(check_number(lua, args, position)?.trunc() as i64)
}

/// `luaL_checkstring`: a string, or a number converted as Lua 5.1 converts it.
pub(crate) fn check_string(
    lua: &Lua,
    args: &MultiValue,
    position: usize,
) -> mlua::Result<mlua::LuaString> {
    let value = args.get(position - 1);
    match value {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v @ (Value::Integer(_) | Value::Number(_))) => lua
            .coerce_string(v.clone())?
            .ok_or_else(|| type_error(lua, value, position, "string")),
        _ => Err(type_error(lua, value, position, "string")),
    }
}

/// A callback argument: a function, or `nil` (or nothing) to unregister; anything else is
/// FCEUX's `luaL_checktype(L, n, LUA_TFUNCTION)` error.
pub(crate) fn check_function_or_nil(
    lua: &Lua,
    args: &MultiValue,
    position: usize,
) -> mlua::Result<Option<Function>> {
    match args.get(position - 1) {
        None | Some(Value::Nil) => Ok(None),
        Some(Value::Function(f)) => Ok(Some(f.clone())),
        other => Err(type_error(lua, other, position, "function")),
    }
}

fn arg(args: &MultiValue, index: usize) -> Value {
    args.get(index).cloned().unwrap_or(Value::Nil)
}

/// A CPU address argument at `index` (0-based), as FCEUX takes it (`luaL_checkinteger`, then
/// the low 16 bits).
fn address(lua: &Lua, args: &MultiValue, index: usize, _function: &str) -> mlua::Result<u16> {
    Ok(check_integer(lua, args, index + 1)? as u16)
}

/// The whole console, which only a frame boundary lends (not a memory hook): else FCEUX's
/// "can't call FUNCTION from here" at `at`, the caller's position.
fn console<'a>(
    machine: &'a mut dyn crate::machine::Machine,
    at: &str,
    function: &str,
) -> mlua::Result<&'a mut nes::Nes> {
    machine
        .console()
        .ok_or_else(|| mlua::Error::runtime(format!("{at}can't call {function} from here")))
}

/// Set a function under each of `names`.
fn set_all(table: &Table, names: &[&str], function: &Function) -> mlua::Result<()> {
    for name in names {
        table.set(*name, function.clone())?;
    }
    Ok(())
}

pub(crate) fn install(
    lua: &Lua,
    shared: &SharedRef,
    registries: &Registries,
    start_arg: Option<&str>,
) -> mlua::Result<()> {
    let globals = lua.globals();
    install_print(lua, shared)?;
    install_os_exit(lua, shared)?;
    install_bit(lua)?;
    globals.set("memory", memory_table(lua, shared, registries)?)?;
    globals.set("joypad", joypad_table(lua, shared)?)?;
    let emu = emu_table(lua, shared, registries)?;
    // FCEUX 2.6.5 registers the same functions a second time as `FCEU`: another table, so
    // `FCEU == emu` is false and changing one leaves the other.
    let fceu = lua.create_table()?;
    for pair in emu.pairs::<Value, Value>() {
        let (key, value) = pair?;
        fceu.raw_set(key, value)?;
    }
    globals.set("emu", emu)?;
    globals.set("FCEU", fceu)?;
    globals.set("gui", gui_table(lua, shared, registries)?)?;
    globals.set("savestate", savestate_table(lua, shared, registries)?)?;
    globals.set("rom", rom_table(lua, shared)?)?;
    globals.set("movie", movie_table(lua, shared)?)?;
    globals.set("sound", sound_table(lua, shared)?)?;
    install_small_tables(lua, shared)?;
    globals.set("arg", start_arg)?;
    install_error_strings(lua, shared)?;
    Ok(())
}

/// Errors raised by the Rust API functions reach Lua as mlua error objects; FCEUX raises plain
/// strings (`file:line: message`). `pcall`, `xpcall` and `coroutine.resume` hand scripts the
/// string instead, so `print(pcall(...))` and string matching on errors work as in FCEUX.
/// None of them stops the unwinding of `os.exit` (FCEUX's process is gone by then).
fn install_error_strings(lua: &Lua, shared: &SharedRef) -> mlua::Result<()> {
    let convert = lua.create_function(|lua, value: Value| {
        Ok(match value {
            Value::Error(error) => Value::String(lua.create_string(crate::error_text(&error))?),
            other => other,
        })
    })?;
    let globals = lua.globals();
    let coroutine: Table = globals.get("coroutine")?;
    let wrappers: MultiValue = lua
        .load(
            "local convert, exiting, pcall, xpcall, resume, error = ...\n\
             local function fix(ok, ...)\n\
               if ok then return true, ... end\n\
               if exiting() then error((...), 0) end\n\
               return false, convert((...))\n\
             end\n\
             return function(f, ...) return fix(pcall(f, ...)) end,\n\
               function(f, handler, ...)\n\
                 return fix(xpcall(f, function(e)\n\
                   if exiting() then return e end\n\
                   return handler(convert(e))\n\
                 end, ...))\n\
               end,\n\
               function(co, ...) return fix(resume(co, ...)) end",
        )
        .set_name("=errors")
        .call((
            convert,
            exiting_probe(lua, shared)?,
            globals.get::<Function>("pcall")?,
            globals.get::<Function>("xpcall")?,
            coroutine.get::<Function>("resume")?,
            globals.get::<Function>("error")?,
        ))?;
    let mut wrappers = wrappers.into_iter();
    globals.set("pcall", wrappers.next().unwrap_or(Value::Nil))?;
    globals.set("xpcall", wrappers.next().unwrap_or(Value::Nil))?;
    coroutine.set("resume", wrappers.next().unwrap_or(Value::Nil))?;
    Ok(())
}
