//! The FCEUX API tables (`emu`, `memory`, `joypad`, `gui`, `savestate`, `rom`, ...) and the
//! extra globals. Behaviour follows `fceux-lua-api.md`; comments cite its rules where a choice
//! is not obvious.

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{Function, Lua, MultiValue, Table, Value};
use nes::fm2::Commands;
use nes::CpuRegisters;

use crate::format::{format_args, format_value, truncate};
use crate::gui::Rgba;
use crate::machine::with_machine;
use crate::{
    bitlib, HookKind, MovieMode, PadOverride, Phase, Registries, Shared, SpeedMode, StateSlot,
};

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
use globals::{install_bit, install_print};
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

/// A number argument (numeric strings allowed, as in Lua 5.1), truncated toward zero.
fn number(lua: &Lua, value: &Value, position: usize, function: &str) -> mlua::Result<f64> {
    let number = match value {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        Value::String(s) => s.to_string_lossy().trim().parse::<f64>().ok(),
        _ => None,
    };
    number.ok_or_else(|| {
        fail(
            lua,
            format!(
                "bad argument #{position} to '{function}' (number expected, got {})",
                value.type_name()
            ),
        )
    })
}

fn integer(lua: &Lua, value: &Value, position: usize, function: &str) -> mlua::Result<i64> {
    Ok(number(lua, value, position, function)?.trunc() as i64)
}

fn arg(args: &MultiValue, index: usize) -> Value {
    args.get(index).cloned().unwrap_or(Value::Nil)
}

fn address(lua: &Lua, args: &MultiValue, index: usize, function: &str) -> mlua::Result<u16> {
    Ok(integer(lua, &arg(args, index), index + 1, function)? as u16)
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
    sentinel: &Value,
    start_arg: Option<&str>,
) -> mlua::Result<()> {
    let globals = lua.globals();
    install_print(lua, shared)?;
    install_bit(lua)?;
    globals.set("memory", memory_table(lua, shared, registries)?)?;
    globals.set("joypad", joypad_table(lua, shared)?)?;
    let emu = emu_table(lua, shared, registries, sentinel)?;
    globals.set("emu", emu.clone())?;
    globals.set("FCEU", emu)?;
    globals.set("gui", gui_table(lua, shared, registries)?)?;
    globals.set("savestate", savestate_table(lua, shared, registries)?)?;
    globals.set("rom", rom_table(lua, shared)?)?;
    globals.set("movie", movie_table(lua, shared)?)?;
    globals.set("sound", sound_table(lua, shared)?)?;
    install_small_tables(lua, shared)?;
    globals.set("arg", start_arg)?;
    install_error_strings(lua)?;
    Ok(())
}

/// Errors raised by the Rust API functions reach Lua as mlua error objects; FCEUX raises plain
/// strings (`file:line: message`). `pcall`, `xpcall` and `coroutine.resume` hand scripts the
/// string instead, so `print(pcall(...))` and string matching on errors work as in FCEUX.
fn install_error_strings(lua: &Lua) -> mlua::Result<()> {
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
            "local convert, pcall, xpcall, resume = ...\n\
             local function fix(ok, ...)\n\
               if ok then return true, ... end\n\
               return false, convert((...))\n\
             end\n\
             return function(f, ...) return fix(pcall(f, ...)) end,\n\
               function(f, handler, ...)\n\
                 return xpcall(f, function(e) return handler(convert(e)) end, ...)\n\
               end,\n\
               function(co, ...) return fix(resume(co, ...)) end",
        )
        .set_name("=errors")
        .call((
            convert,
            globals.get::<Function>("pcall")?,
            globals.get::<Function>("xpcall")?,
            coroutine.get::<Function>("resume")?,
        ))?;
    let mut wrappers = wrappers.into_iter();
    globals.set("pcall", wrappers.next().unwrap_or(Value::Nil))?;
    globals.set("xpcall", wrappers.next().unwrap_or(Value::Nil))?;
    coroutine.set("resume", wrappers.next().unwrap_or(Value::Nil))?;
    Ok(())
}
