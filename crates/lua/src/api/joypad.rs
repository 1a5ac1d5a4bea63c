//! `joypad`: the pads as latched, and the script's overrides for the next latch.

use super::*;

const BUTTON_NAMES: [&str; 8] = ["A", "B", "select", "start", "up", "down", "left", "right"];

fn player(lua: &Lua, value: &Value, function: &str) -> mlua::Result<usize> {
    let player = integer(lua, value, 1, function)?;
    if !(1..=4).contains(&player) {
        return Err(fail(
            lua,
            format!("{function}: invalid player {player} (players are 1-4)"),
        ));
    }
    Ok(player as usize - 1)
}

pub(super) fn joypad_table(lua: &Lua, shared: &SharedRef) -> mlua::Result<Table> {
    let joypad = lua.create_table()?;
    let s = shared.clone();
    let set = lua.create_function(move |lua, (p, buttons): (Value, Value)| {
        let pad = player(lua, &p, "joypad.set")?;
        let Value::Table(buttons) = buttons else {
            return Err(fail(lua, "joypad.set: a table of buttons is required"));
        };
        let mut over = PadOverride::default();
        for (bit, name) in BUTTON_NAMES.iter().enumerate() {
            let mask = 1u8 << bit;
            match buttons.get::<Value>(*name)? {
                Value::Nil => {}
                Value::Boolean(false) => over.off |= mask,
                Value::Boolean(true) => over.on |= mask,
                // Any string or number inverts the user's input (FCEUX's "invert" rule).
                Value::String(_) | Value::Integer(_) | Value::Number(_) => over.invert |= mask,
                _ => over.on |= mask,
            }
        }
        s.borrow_mut().overrides[pad] = over;
        Ok(())
    })?;
    set_all(&joypad, &["set", "write"], &set)?;
    // `which`: Some(true) only pressed keys, Some(false) only released ones, None all.
    let getter = |which: Option<bool>, name: &'static str| {
        let s = shared.clone();
        lua.create_function(move |lua, p: Value| {
            let pad = player(lua, &p, name)?;
            let bits = s.borrow().latched[pad];
            let table = lua.create_table()?;
            for (bit, key) in BUTTON_NAMES.iter().enumerate() {
                let pressed = bits & (1 << bit) != 0;
                if which.is_none_or(|w| w == pressed) {
                    table.set(*key, pressed)?;
                }
            }
            Ok(table)
        })
    };
    let get = getter(None, "joypad.get")?;
    set_all(
        &joypad,
        &["get", "read", "getimmediate", "readimmediate"],
        &get,
    )?;
    joypad.set("getdown", getter(Some(true), "joypad.getdown")?)?;
    joypad.set("readdown", getter(Some(true), "joypad.readdown")?)?;
    joypad.set("getup", getter(Some(false), "joypad.getup")?)?;
    joypad.set("readup", getter(Some(false), "joypad.readup")?)?;
    Ok(joypad)
}
