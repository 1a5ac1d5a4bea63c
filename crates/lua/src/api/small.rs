//! `input`, `zapper`, `debugger` and `taseditor`.

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
    let debugger = lua.create_table()?;
    let s = shared.clone();
    debugger.set(
        "getcyclescount",
        lua.create_function(move |lua, ()| {
            let base = s.borrow().cycle_base;
            let cycles: f64 = with_machine(lua, |_, machine| {
                Ok(MultiValue::from_vec(vec![Value::Number(
                    machine.registers().cycles as f64,
                )]))
            })?;
            Ok(cycles - base as f64)
        })?,
    )?;
    let s = shared.clone();
    debugger.set(
        "resetcyclescount",
        lua.create_function(move |lua, ()| {
            let cycles: f64 = with_machine(lua, |_, machine| {
                Ok(MultiValue::from_vec(vec![Value::Number(
                    machine.registers().cycles as f64,
                )]))
            })?;
            s.borrow_mut().cycle_base = cycles as u64;
            Ok(())
        })?,
    )?;
    // The core does not count instructions; these are the spec's "minimal versions".
    debugger.set("getinstructionscount", lua.create_function(|_, ()| Ok(0))?)?;
    debugger.set(
        "resetinstructionscount",
        lua.create_function(|_, ()| Ok(()))?,
    )?;
    debugger.set(
        "hitbreakpoint",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    globals.set("debugger", debugger)?;
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
