//! `joypad`: the pads as latched, and the script's overrides for the next latch.

use super::*;

const BUTTON_NAMES: [&str; 8] = ["A", "B", "select", "start", "up", "down", "left", "right"];

/// Which pad the first argument names (1-4), with FCEUX's messages: `direction` is "input"
/// for the readers and "output" for `joypad.set`.
fn player(lua: &Lua, args: &MultiValue, direction: &str) -> mlua::Result<usize> {
    let player = check_integer(lua, args, 1)?;
    if !(1..=4).contains(&player) {
        return Err(fail(
            lua,
            format!("Invalid {direction} port (valid range 1-4, specified {player})"),
        ));
    }
    Ok(player as usize - 1)
}

pub(super) fn joypad_table(lua: &Lua, shared: &SharedRef) -> mlua::Result<Table> {
    let joypad = lua.create_table()?;
    let s = shared.clone();
    let set = lua.create_function(move |lua, args: MultiValue| {
        let pad = player(lua, &args, "output")?;
        let Some(Value::Table(buttons)) = args.get(1) else {
            return Err(type_error(lua, args.get(1), 2, "table"));
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
    let getter = |which: Option<bool>| {
        let s = shared.clone();
        lua.create_function(move |lua, args: MultiValue| {
            let pad = player(lua, &args, "input")?;
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
    let get = getter(None)?;
    set_all(&joypad, &["get", "read"], &get)?;
    // FCEUX 2.6.5 returns nil: the immediate state exists only in its Windows build.
    let immediate = lua.create_function(|_, _: MultiValue| Ok(Value::Nil))?;
    set_all(&joypad, &["getimmediate", "readimmediate"], &immediate)?;
    joypad.set("getdown", getter(Some(true))?)?;
    joypad.set("readdown", getter(Some(true))?)?;
    joypad.set("getup", getter(Some(false))?)?;
    joypad.set("readup", getter(Some(false))?)?;
    Ok(joypad)
}
