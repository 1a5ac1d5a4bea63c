//! `emu` (also `FCEU`): frame control, counts, messages, speed, reset and power.

use super::*;

pub(super) fn emu_table(
    lua: &Lua,
    shared: &SharedRef,
    registries: &Registries,
    sentinel: &Value,
) -> mlua::Result<Table> {
    let emu = lua.create_table()?;
    // frameadvance: a host check (raises outside the main slice), then a yield of the sentinel.
    let s = shared.clone();
    let check = lua.create_function(move |lua, ()| {
        if s.borrow().phase != Phase::Main {
            // Level 2: the script's call of the `frameadvance` wrapper that calls this check.
            return Err(mlua::Error::runtime(format!(
                "{}can't call emu.frameadvance() from here",
                location_at(lua, 2)
            )));
        }
        Ok(())
    })?;
    let make: Function = lua
        .load(
            "local check, sentinel = ...\n\
             local yield = coroutine.yield\n\
             return function() check() return yield(sentinel) end",
        )
        .set_name("=frameadvance")
        .into_function()?;
    let frameadvance: Function = make.call((check, sentinel.clone()))?;
    emu.set("frameadvance", frameadvance)?;

    let s = shared.clone();
    emu.set(
        "speedmode",
        lua.create_function(move |lua, mode: Value| {
            let name = match &mode {
                Value::String(t) => t.to_string_lossy(),
                _ => String::new(),
            };
            let Some(speed) = SpeedMode::from_name(&name) else {
                return Err(fail(
                    lua,
                    "Invalid mode - must be normal, nothrottle, turbo or maximum",
                ));
            };
            s.borrow_mut().speed = speed;
            Ok(())
        })?,
    )?;
    set_getter(lua, &emu, "framecount", shared, |s| s.frame_count)?;
    set_getter(lua, &emu, "lagcount", shared, |s| s.lag_count)?;
    emu.set(
        "lagged",
        lua.create_function(|lua, ()| {
            with_machine::<bool>(lua, |_, machine| {
                Ok(MultiValue::from_vec(vec![Value::Boolean(machine.lagged())]))
            })
        })?,
    )?;
    emu.set(
        "setlagflag",
        lua.create_function(|lua, flag: Value| {
            let lagged = !matches!(flag, Value::Nil | Value::Boolean(false));
            with_machine::<()>(lua, move |_, machine| {
                machine.set_lagged(lagged);
                Ok(MultiValue::new())
            })
        })?,
    )?;
    let s = shared.clone();
    emu.set(
        "exit",
        lua.create_function(move |_, ()| {
            s.borrow_mut().exit_requested = true;
            Ok(())
        })?,
    )?;
    emu.set("emulating", lua.create_function(|_, ()| Ok(true))?)?;
    set_getter(lua, &emu, "paused", shared, |s| s.paused)?;
    let s = shared.clone();
    emu.set(
        "pause",
        lua.create_function(move |_, ()| {
            s.borrow_mut().paused = true;
            Ok(())
        })?,
    )?;
    let s = shared.clone();
    emu.set(
        "unpause",
        lua.create_function(move |_, ()| {
            s.borrow_mut().paused = false;
            Ok(())
        })?,
    )?;
    for (name, command) in [
        ("poweron", Commands::POWER),
        ("softreset", Commands::SOFT_RESET),
    ] {
        let s = shared.clone();
        emu.set(
            name,
            lua.create_function(move |lua, ()| {
                let s = s.clone();
                let at = location(lua);
                with_machine::<()>(lua, move |_, machine| {
                    let Some(nes) = machine.console() else {
                        return Err(mlua::Error::runtime(format!(
                            "{at}can't call emu.{name}() from here"
                        )));
                    };
                    let mut shared = s.borrow_mut();
                    // As FCEUX's menu commands: refused while a movie plays (or has finished),
                    // recorded while one records; outside movies the frame count restarts.
                    match shared.movie.mode {
                        MovieMode::Playback | MovieMode::Finished => return Ok(MultiValue::new()),
                        MovieMode::Record => shared.commands |= command,
                        MovieMode::Inactive => {}
                    }
                    nes.apply_movie_commands(command);
                    if shared.movie.mode == MovieMode::Inactive {
                        nes.reset_frame_count();
                    }
                    shared.frame_count = nes.frame_count();
                    shared.lag_count = nes.lag_count();
                    Ok(MultiValue::new())
                })
            })?,
        )?;
    }
    let s = shared.clone();
    emu.set(
        "message",
        lua.create_function(move |lua, value: Value| {
            let mut text = String::new();
            format_value(lua, &value, false, &mut text);
            s.borrow_mut().messages.push(text);
            Ok(())
        })?,
    )?;
    emu.set("print", lua.globals().get::<Function>("print")?)?;
    let s = shared.clone();
    emu.set(
        "getscreenpixel",
        lua.create_function(move |lua, (x, y, emu_only): (Value, Value, Value)| {
            let x = integer(lua, &x, 1, "getscreenpixel")?;
            let y = integer(lua, &y, 2, "getscreenpixel")?;
            if !(0..256).contains(&x) || !(0..240).contains(&y) {
                return Err(fail(lua, "getscreenpixel: x must be 0-255 and y 0-239"));
            }
            let emu_only = !matches!(emu_only, Value::Nil | Value::Boolean(false));
            let at = location(lua);
            let pixel: i64 = with_machine(lua, move |_, machine| {
                let Some(nes) = machine.console() else {
                    return Err(mlua::Error::runtime(format!(
                        "{at}can't call emu.getscreenpixel() from here"
                    )));
                };
                let value = if nes.frame_count() == 0 {
                    -1
                } else {
                    i64::from(nes.frame_buffer()[y as usize * 256 + x as usize])
                };
                Ok(MultiValue::from_vec(vec![Value::Integer(value)]))
            })?;
            let shared = s.borrow();
            let (mut rgb, index) = match (pixel, shared.palette.as_ref()) {
                (p, Some(palette)) if p >= 0 => (palette.rgb(p as u16), (p & 0x3F) as u8),
                _ => ([0, 0, 0], 254),
            };
            if !emu_only {
                let i = (y as usize * 256 + x as usize) * 4;
                let over = &shared.overlay.shown()[i..i + 4];
                let alpha = u32::from(over[3]);
                for c in 0..3 {
                    rgb[c] =
                        ((u32::from(over[c]) * alpha + u32::from(rgb[c]) * (255 - alpha) + 127)
                            / 255) as u8;
                }
            }
            Ok((rgb[0], rgb[1], rgb[2], index))
        })?,
    )?;
    for (name, key) in [
        ("registerbefore", "before"),
        ("registerafter", "after"),
        ("registerexit", "exit"),
    ] {
        emu.set(name, callback_setter(lua, registries, key, name)?)?;
    }
    set_getter(lua, &emu, "exec_count", shared, |s| s.frame_count)?;
    emu.set(
        "setrenderplanes",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    emu.set(
        "addgamegenie",
        lua.create_function(|_, _: MultiValue| Ok(false))?,
    )?;
    emu.set(
        "delgamegenie",
        lua.create_function(|_, _: MultiValue| Ok(false))?,
    )?;
    emu.set("getdir", lua.create_function(|_, ()| Ok("."))?)?;
    emu.set(
        "loadrom",
        lua.create_function(|lua, _: MultiValue| {
            Err::<(), _>(fail(lua, "emu.loadrom is not supported"))
        })?,
    )?;
    Ok(emu)
}

/// `emu.registerbefore` and friends: one callback each, `nil` clears, returns the old one.
pub(super) fn callback_setter(
    lua: &Lua,
    registries: &Registries,
    key: &'static str,
    name: &'static str,
) -> mlua::Result<Function> {
    let callbacks = registries.callbacks.clone();
    lua.create_function(move |lua, function: Value| {
        let function = match function {
            Value::Function(_) | Value::Nil => function,
            other => {
                return Err(fail(
                    lua,
                    format!(
                        "{name}: function or nil expected, got {}",
                        other.type_name()
                    ),
                ))
            }
        };
        let previous: Value = callbacks.raw_get(key)?;
        callbacks.raw_set(key, function)?;
        Ok(previous)
    })
}
