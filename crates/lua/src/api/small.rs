//! `input`, `zapper`, `debugger` and `taseditor`.

use mlua::IntoLuaMulti;

use super::*;

pub(super) fn install_small_tables(lua: &Lua, shared: &SharedRef) -> mlua::Result<()> {
    let globals = lua.globals();
    let input = lua.create_table()?;
    let s = shared.clone();
    input.set(
        "get",
        lua.create_function(move |lua, ()| {
            let shared = s.borrow();
            let host = &shared.host_input;
            let t = lua.create_table()?;
            for &key in &host.keys {
                t.set(key, true)?;
            }
            t.set("xmouse", host.mouse_x)?;
            t.set("ymouse", host.mouse_y)?;
            t.set("click", host.buttons)?;
            Ok(t)
        })?,
    )?;
    input.set("popup", lua.create_function(|_, _: MultiValue| Ok("ok"))?)?;
    globals.set("input", input)?;
    let zapper = lua.create_table()?;
    let s = shared.clone();
    zapper.set(
        "read",
        // The zapper is aimed with the mouse and fired with its left button, as in FCEUX.
        lua.create_function(move |lua, _: MultiValue| {
            let shared = s.borrow();
            let host = &shared.host_input;
            let t = lua.create_table()?;
            t.set("x", host.mouse_x)?;
            t.set("y", host.mouse_y)?;
            t.set("fire", host.buttons & 1)?;
            Ok(t)
        })?,
    )?;
    globals.set("zapper", zapper)?;
    globals.set("debugger", debugger_table(lua, shared)?)?;
    let taseditor = lua.create_table()?;
    for name in [
        "engaged",
        "markedframe",
        "setplayback",
        "registerauto",
        "registermanual",
    ] {
        taseditor.set(name, lua.create_function(|_, _: MultiValue| Ok(false))?)?;
    }
    globals.set("taseditor", taseditor)?;
    Ok(())
}

/// `debugger`: FCEUX's cycle and instruction counters. Cycles count from the script's base
/// (`resetcyclescount` sets it; it is not machine state, so it outlives power cycles and state
/// loads); instructions are the console's count ([`nes::Nes::instruction_count`]), which
/// `resetinstructionscount` zeroes.
fn debugger_table(lua: &Lua, shared: &SharedRef) -> mlua::Result<Table> {
    let debugger = lua.create_table()?;
    let s = shared.clone();
    debugger.set(
        "getcyclescount",
        lua.create_function(move |lua, ()| {
            let now = cycles(lua)?;
            let base = s.borrow().cycle_base;
            if let Some(count) = now.checked_sub(base) {
                return Ok(count as f64);
            }
            // Counting would go negative (a power cycle or a state load went back past the
            // base): FCEUX 2.6.5 then resets both counters and says 0 (measured in
            // tests/fceux/lua/debugger.lua, "poweron, frame 1" and "loaded below the base").
            s.borrow_mut().cycle_base = now;
            reset_instructions(lua)?;
            Ok(0.0)
        })?,
    )?;
    let s = shared.clone();
    debugger.set(
        "resetcyclescount",
        lua.create_function(move |lua, ()| {
            s.borrow_mut().cycle_base = cycles(lua)?;
            Ok(())
        })?,
    )?;
    debugger.set(
        "getinstructionscount",
        lua.create_function(|lua, ()| {
            with_machine::<f64>(lua, |lua, machine| {
                (machine.instruction_count() as f64).into_lua_multi(lua)
            })
        })?,
    )?;
    debugger.set(
        "resetinstructionscount",
        lua.create_function(|lua, ()| reset_instructions(lua))?,
    )?;
    debugger.set(
        "hitbreakpoint",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    Ok(debugger)
}

/// The lent machine's cycle count (see [`crate::machine::Machine::cycles`]).
fn cycles(lua: &Lua) -> mlua::Result<u64> {
    let cycles: f64 = with_machine(lua, |lua, machine| {
        (machine.cycles() as f64).into_lua_multi(lua)
    })?;
    Ok(cycles as u64)
}

fn reset_instructions(lua: &Lua) -> mlua::Result<()> {
    with_machine(lua, |_, machine| {
        machine.reset_instruction_count();
        Ok(MultiValue::new())
    })
}
