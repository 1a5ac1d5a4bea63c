//! `emu` (also `FCEU`): frame control, counts, messages, speed, reset and power.

use super::*;

pub(super) fn emu_table(
    lua: &Lua,
    shared: &SharedRef,
    registries: &Registries,
) -> mlua::Result<Table> {
    let emu = lua.create_table()?;
    // frameadvance, as FCEUX 2.6.5 has it (measured by tests/fceux/lua/coroutines.lua): one
    // "waiting" flag, set by each call and cleared only when the host resumes the main
    // coroutine for a frame. A call while it is set raises "can't call emu.frameadvance() from
    // here" (at the caller's line, none when the caller is `pcall`): so in every callback and
    // hook during a frame, and in every call after a yield that was not the main slice's end.
    // The yield itself is a plain `coroutine.yield()` with no values (FCEUX's
    // `lua_yield(L, 0)`): in a coroutine of the script's it returns to its `resume` and leaves
    // the flag set, so the script dies at its next frameadvance; across `pcall` or a callback
    // PUC Lua refuses it ("attempt to yield across metamethod/C-call boundary"), flag set too.
    let s = shared.clone();
    let check = lua.create_function(move |lua, ()| {
        let mut shared = s.borrow_mut();
        if shared.frame_advance_waiting {
            return Err(mlua::Error::runtime(format!(
                // Level 2: the caller of the `frameadvance` wrapper that calls this check.
                "{}can't call emu.frameadvance() from here",
                location_at(lua, 2)
            )));
        }
        shared.frame_advance_waiting = true;
        Ok(())
    })?;
    let make: Function = lua
        .load(
            "local check = ...\n\
             local yield = coroutine.yield\n\
             return function() check() return yield() end",
        )
        .set_name("=frameadvance")
        .into_function()?;
    let frameadvance: Function = make.call(check)?;
    emu.set("frameadvance", frameadvance)?;

    let s = shared.clone();
    emu.set(
        "speedmode",
        lua.create_function(move |lua, args: MultiValue| {
            let mode = check_string(lua, &args, 1)?;
            let mode = mode.to_string_lossy();
            let Some(speed) = SpeedMode::from_name(&mode) else {
                return Err(fail(lua, format!("Invalid mode {mode} to emu.speedmode")));
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
                    let nes = console(machine, &at, &format!("emu.{name}()"))?;
                    let mut shared = s.borrow_mut();
                    // As FCEUX's menu commands: refused while a movie plays (or has finished),
                    // recorded while one records; outside movies the frame count restarts.
                    match shared.movie.mode {
                        MovieMode::Playback | MovieMode::Finished => return Ok(MultiValue::new()),
                        MovieMode::Record => shared.commands |= command,
                        MovieMode::Inactive => {}
                    }
                    command.apply(nes);
                    if shared.movie.mode == MovieMode::Inactive {
                        nes.reset_frame_count();
                    }
                    shared.sync_counts(nes);
                    Ok(MultiValue::new())
                })
            })?,
        )?;
    }
    let s = shared.clone();
    emu.set(
        "message",
        lua.create_function(move |lua, args: MultiValue| {
            let text = check_string(lua, &args, 1)?.to_string_lossy();
            s.borrow_mut().messages.push(text);
            Ok(())
        })?,
    )?;
    emu.set("print", lua.globals().get::<Function>("print")?)?;
    let s = shared.clone();
    emu.set(
        "getscreenpixel",
        lua.create_function(move |lua, args: MultiValue| {
            let x = check_integer(lua, &args, 1)?;
            let y = check_integer(lua, &args, 2)?;
            let emu_only = arg(&args, 2);
            if !(0..256).contains(&x) || !(0..240).contains(&y) {
                return Err(fail(lua, "bad coordinates. Use 0-255 x 0-239"));
            }
            let emu_only = !matches!(emu_only, Value::Nil | Value::Boolean(false));
            let at = location(lua);
            let pixel: i64 = with_machine(lua, move |_, machine| {
                let nes = console(machine, &at, "emu.getscreenpixel()")?;
                let value = if nes.frame_count() == 0 {
                    -1
                } else {
                    i64::from(nes.frame_buffer()[y as usize * 256 + x as usize])
                };
                Ok(MultiValue::from_vec(vec![Value::Integer(value)]))
            })?;
            let shared = s.borrow();
            let (mut rgb, mut index) = match (pixel, shared.palette.as_ref()) {
                (p, Some(palette)) if p >= 0 => (palette.rgb(p as u16), (p & 0x3F) as u8),
                // Before the first frame FCEUX reads its zeroed buffer as black, entry 0.
                _ => ([0, 0, 0], 0),
            };
            // The overlay composited as it was shown (gui.rs), with its palette entry.
            let shown = shared.overlay.composite_pixel(x as usize, y as usize);
            if let (false, Some((over, entry))) = (emu_only, shown) {
                (rgb, index) = (over, entry & 0x3F);
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
    // The movie read-only toggle (FCEUX's, on by default), which `movie.readonly` reports
    // while a movie is open.
    set_getter(lua, &emu, "readonly", shared, |s| s.readonly)?;
    emu.set("setreadonly", readonly_setter(lua, shared)?)?;
    // Run a function `count` times, or for `milliseconds`: FCEUX's profiling helpers. Both
    // loop here, in Rust, where the watchdog's count hook does not run when `f` is a C
    // function (`emu.exec_count(2^53, emu.framecount)`): they consult the watchdog themselves.
    emu.set(
        "exec_count",
        lua.create_function(|lua, args: MultiValue| {
            let count = check_integer(lua, &args, 1)?;
            if let Some(Value::Function(f)) = args.get(1) {
                for _ in 0..count {
                    crate::watchdog::check(lua)?;
                    f.call::<()>(())?;
                }
            }
            Ok(())
        })?,
    )?;
    emu.set(
        "exec_time",
        lua.create_function(|lua, args: MultiValue| {
            let milliseconds = check_integer(lua, &args, 1)?;
            if let Some(Value::Function(f)) = args.get(1) {
                let start = std::time::Instant::now();
                // `milliseconds` comes from the script: a time past what an Instant can hold
                // (`emu.exec_time(1e308, f)`) means for ever, as it does in FCEUX.
                let end =
                    start.checked_add(std::time::Duration::from_millis(milliseconds.max(0) as u64));
                while end.is_none_or(|end| std::time::Instant::now() < end) {
                    crate::watchdog::check(lua)?;
                    f.call::<()>(())?;
                }
            }
            Ok(())
        })?,
    )?;
    // The debugger's step loop: nothing to wait for without a debugger window.
    for name in ["debuggerloop", "debuggerloopstep"] {
        emu.set(name, lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    }
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
    _name: &'static str,
) -> mlua::Result<Function> {
    let callbacks = registries.callbacks.clone();
    lua.create_function(move |lua, args: MultiValue| {
        let function = check_function_or_nil(lua, &args, 1)?;
        let previous: Value = callbacks.raw_get(key)?;
        callbacks.raw_set(key, function)?;
        Ok(previous)
    })
}

/// `emu.setreadonly` and `movie.setreadonly`: both set FCEUX's one read-only toggle.
pub(super) fn readonly_setter(lua: &Lua, shared: &SharedRef) -> mlua::Result<Function> {
    let s = shared.clone();
    lua.create_function(move |_, flag: Value| {
        s.borrow_mut().readonly = !matches!(flag, Value::Nil | Value::Boolean(false));
        Ok(())
    })
}
