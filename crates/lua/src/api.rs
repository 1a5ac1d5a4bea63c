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

// ----- print / tostring / globals ---------------------------------------------------------

fn install_print(lua: &Lua, shared: &SharedRef) -> mlua::Result<()> {
    let globals = lua.globals();
    let out = shared.clone();
    let print = lua.create_function(move |lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        let line = format_args(lua, &args);
        out.borrow_mut().output.push(line);
        Ok(())
    })?;
    globals.set("print", print)?;
    let tostring = lua.create_function(|lua, value: Value| {
        let mut text = String::new();
        format_value(lua, &value, false, &mut text);
        truncate(&mut text);
        Ok(text)
    })?;
    globals.set("tostring", tostring)?;
    Ok(())
}

fn install_bit(lua: &Lua) -> mlua::Result<()> {
    let globals = lua.globals();
    // LuaJIT has LuaBitOp built in; PUC Lua 5.1 gets ours.
    let bit: Table = match globals.get::<Option<Table>>("bit")? {
        Some(bit) => bit,
        None => {
            let bit = bitlib::create(lua)?;
            globals.set("bit", bit.clone())?;
            bit
        }
    };
    globals.set("AND", bit.get::<Function>("band")?)?;
    globals.set("OR", bit.get::<Function>("bor")?)?;
    globals.set("XOR", bit.get::<Function>("bxor")?)?;
    globals.set(
        "SHIFT",
        lua.create_function(|lua, (n, s): (Value, Value)| {
            let n = bitlib::to_bit(number(lua, &n, 1, "SHIFT")?) as u32;
            let s = integer(lua, &s, 2, "SHIFT")?;
            let shifted = if s >= 32 || s <= -32 {
                0
            } else if s >= 0 {
                n >> s
            } else {
                n << -s
            };
            Ok(shifted as i32)
        })?,
    )?;
    globals.set(
        "BIT",
        lua.create_function(|lua, args: MultiValue| {
            let mut mask = 0u32;
            for (i, value) in args.iter().enumerate() {
                let bit = integer(lua, value, i + 1, "BIT")?;
                if (0..32).contains(&bit) {
                    mask |= 1 << bit;
                }
            }
            Ok(mask as i32)
        })?,
    )?;
    globals.set(
        "tobitstring",
        lua.create_function(|lua, n: Value| {
            let n = bitlib::to_bit(number(lua, &n, 1, "tobitstring")?) as u8;
            Ok(format!("{:04b} {:04b}", n >> 4, n & 0x0F))
        })?,
    )?;
    globals.set(
        "copytable",
        lua.create_function(|lua, value: Value| match value {
            Value::Table(table) => {
                let copy = lua.create_table()?;
                for pair in table.pairs::<Value, Value>() {
                    let (k, v) = pair?;
                    copy.raw_set(k, v)?;
                }
                copy.set_metatable(table.metatable())?;
                Ok(Value::Table(copy))
            }
            other => Ok(other),
        })?,
    )?;
    globals.set(
        "addressof",
        lua.create_function(|_, value: Value| Ok(value.to_pointer() as usize as f64))?,
    )?;
    Ok(())
}

// ----- memory -------------------------------------------------------------------------------

const REGISTER_NAMES: [&str; 6] = ["pc", "a", "x", "y", "s", "p"];

fn register_value(regs: &CpuRegisters, name: &str) -> Option<u16> {
    Some(match name {
        "pc" => regs.pc,
        "a" => u16::from(regs.a),
        "x" => u16::from(regs.x),
        "y" => u16::from(regs.y),
        "s" => u16::from(regs.s),
        "p" => u16::from(regs.p),
        _ => return None,
    })
}

fn set_register_value(regs: &mut CpuRegisters, name: &str, value: i64) {
    let byte = value as u8;
    match name {
        "pc" => regs.pc = value as u16,
        "a" => regs.a = byte,
        "x" => regs.x = byte,
        "y" => regs.y = byte,
        "s" => regs.s = byte,
        "p" => regs.p = byte,
        _ => {}
    }
}

fn peek(lua: &Lua, addr: u16) -> mlua::Result<u8> {
    with_machine(lua, move |_, machine| {
        Ok(MultiValue::from_vec(vec![Value::Integer(i64::from(
            machine.peek(addr),
        ))]))
    })
}

fn memory_table(lua: &Lua, shared: &SharedRef, registries: &Registries) -> mlua::Result<Table> {
    let memory = lua.create_table()?;
    let readbyte = lua.create_function(|lua, args: MultiValue| {
        let addr = address(lua, &args, 0, "readbyte")?;
        peek(lua, addr)
    })?;
    set_all(&memory, &["readbyte", "readbyteunsigned"], &readbyte)?;
    memory.set(
        "readbytesigned",
        lua.create_function(|lua, args: MultiValue| {
            let addr = address(lua, &args, 0, "readbytesigned")?;
            Ok(peek(lua, addr)? as i8)
        })?,
    )?;
    let read_word = |lua: &Lua, args: &MultiValue, name: &str| -> mlua::Result<u16> {
        let low = address(lua, args, 0, name)?;
        let high = match arg(args, 1) {
            Value::Nil => low.wrapping_add(1),
            _ => address(lua, args, 1, name)?,
        };
        Ok(u16::from(peek(lua, low)?) | (u16::from(peek(lua, high)?) << 8))
    };
    let readword =
        lua.create_function(move |lua, args: MultiValue| read_word(lua, &args, "readword"))?;
    set_all(&memory, &["readword", "readwordunsigned"], &readword)?;
    memory.set(
        "readwordsigned",
        lua.create_function(move |lua, args: MultiValue| {
            Ok(read_word(lua, &args, "readwordsigned")? as i16)
        })?,
    )?;
    memory.set(
        "readbyterange",
        lua.create_function(|lua, args: MultiValue| {
            let start = address(lua, &args, 0, "readbyterange")?;
            let len = integer(lua, &arg(&args, 1), 2, "readbyterange")?.clamp(0, 0x10000) as usize;
            let bytes: mlua::LuaString = with_machine(lua, move |lua, machine| {
                let bytes: Vec<u8> = (0..len)
                    .map(|i| machine.peek(start.wrapping_add(i as u16)))
                    .collect();
                Ok(MultiValue::from_vec(vec![Value::String(
                    lua.create_string(bytes)?,
                )]))
            })?;
            Ok(bytes)
        })?,
    )?;
    memory.set(
        "writebyte",
        lua.create_function(|lua, args: MultiValue| {
            let addr = address(lua, &args, 0, "writebyte")?;
            let value = integer(lua, &arg(&args, 1), 2, "writebyte")? as u8;
            // Lua writes never fire hooks: the machine's poke is not a CPU store.
            with_machine::<()>(lua, move |_, machine| {
                machine.poke(addr, value);
                Ok(MultiValue::new())
            })
        })?,
    )?;
    memory.set(
        "getregister",
        lua.create_function(|lua, name: Value| {
            let name = match name {
                Value::String(s) => s.to_string_lossy().to_ascii_lowercase(),
                _ => return Ok(Value::Nil),
            };
            if !REGISTER_NAMES.contains(&name.as_str()) {
                return Ok(Value::Nil);
            }
            let regs: (u16, u8, u8, u8, u8, u8) = with_machine(lua, |lua, machine| {
                let r = machine.registers();
                (r.pc, r.a, r.x, r.y, r.s, r.p).into_lua_multi(lua)
            })?;
            let regs = CpuRegisters {
                pc: regs.0,
                a: regs.1,
                x: regs.2,
                y: regs.3,
                s: regs.4,
                p: regs.5,
                cycles: 0,
            };
            Ok(register_value(&regs, &name).map_or(Value::Nil, |v| Value::Integer(i64::from(v))))
        })?,
    )?;
    memory.set(
        "setregister",
        lua.create_function(|lua, (name, value): (Value, Value)| {
            let name = match name {
                Value::String(s) => s.to_string_lossy().to_ascii_lowercase(),
                _ => return Ok(()),
            };
            if !REGISTER_NAMES.contains(&name.as_str()) {
                return Ok(());
            }
            let value = integer(lua, &value, 2, "setregister")?;
            with_machine::<()>(lua, move |_, machine| {
                let mut regs = machine.registers();
                set_register_value(&mut regs, &name, value);
                machine.set_registers(regs);
                Ok(MultiValue::new())
            })
        })?,
    )?;
    for (kind, names) in [
        (HookKind::Write, &["registerwrite", "register"][..]),
        (
            HookKind::Exec,
            &["registerexec", "registerexecute", "registerrun"][..],
        ),
        (HookKind::Read, &["registerread"][..]),
    ] {
        let table = registries.hooks(kind).clone();
        let shared = shared.clone();
        let function = lua.create_function(move |lua, args: MultiValue| {
            register_hook(lua, &shared, &table, kind, args)
        })?;
        set_all(&memory, names, &function)?;
    }
    Ok(memory)
}

use mlua::IntoLuaMulti;

/// `memory.register*`: `(addr, fn)`, `(addr, size, fn)`, `(addr, nil)`, `(addr, size, nil)`;
/// string arguments (a CPU name such as `"sub"`) are ignored.
fn register_hook(
    lua: &Lua,
    shared: &SharedRef,
    table: &Table,
    kind: HookKind,
    args: MultiValue,
) -> mlua::Result<()> {
    let name = match kind {
        HookKind::Exec => "registerexec",
        HookKind::Write => "registerwrite",
        HookKind::Read => "registerread",
    };
    let mut args: Vec<Value> = args.into_iter().collect();
    if args.is_empty() {
        return Err(fail(
            lua,
            format!("bad argument #1 to '{name}' (number expected)"),
        ));
    }
    let start = integer(lua, &args[0], 1, name)?;
    let rest: Vec<Value> = args
        .drain(1..)
        .filter(|v| !matches!(v, Value::String(_)))
        .collect();
    let (size, function) = match rest.as_slice() {
        [] => {
            return Err(fail(
                lua,
                format!("{name}: a function (or nil) is required"),
            ))
        }
        [function] => (1, function.clone()),
        [size, function, ..] => (integer(lua, size, 2, name)?, function.clone()),
    };
    let function = match function {
        Value::Function(f) => Some(f),
        Value::Nil => None,
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
    // A negative size covers |size| bytes ending at addr (FCEUX: addr -= |size| - 1).
    let (first, count) = if size < 0 {
        (start - (-size) + 1, -size)
    } else {
        (start, size)
    };
    let count = count.min(0x10000);
    let mut shared = shared.borrow_mut();
    for i in 0..count {
        let addr = (first + i) as u16;
        table.raw_set(addr, function.clone())?;
        shared.hook_changes.push((kind, addr, function.is_some()));
    }
    Ok(())
}

// ----- joypad -------------------------------------------------------------------------------

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

fn joypad_table(lua: &Lua, shared: &SharedRef) -> mlua::Result<Table> {
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

// ----- emu ------------------------------------------------------------------------------------

fn emu_table(
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
fn callback_setter(
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

// ----- gui ------------------------------------------------------------------------------------

const NAMED_COLOURS: [(&str, u32); 15] = [
    ("white", 0xFFFF_FFFF),
    ("black", 0x0000_00FF),
    ("clear", 0x0000_0000),
    ("gray", 0x7F7F_7FFF),
    ("grey", 0x7F7F_7FFF),
    ("red", 0xFF00_00FF),
    ("orange", 0xFF7F_00FF),
    ("yellow", 0xFFFF_00FF),
    ("chartreuse", 0x7FFF_00FF),
    ("green", 0x00FF_00FF),
    ("teal", 0x00FF_7FFF),
    ("cyan", 0x00FF_FFFF),
    ("blue", 0x0000_FFFF),
    ("purple", 0x7F00_FFFF),
    ("magenta", 0xFF00_FFFF),
];

/// Any of FCEUX's colour forms; `None` when it is not a colour.
pub(crate) fn parse_color(shared: &Shared, value: &Value) -> Option<Rgba> {
    match value {
        Value::Integer(i) => Some((*i as u32).to_be_bytes()),
        Value::Number(n) => Some((bitlib::to_bit(*n) as u32).to_be_bytes()),
        Value::String(s) => {
            let text = s.to_string_lossy();
            let lower = text.to_ascii_lowercase();
            if let Some(hex) = lower.strip_prefix('#') {
                let digits = u32::from_str_radix(hex, 16).ok()?;
                return match hex.len() {
                    6 => Some(((digits << 8) | 0xFF).to_be_bytes()),
                    8 => Some(digits.to_be_bytes()),
                    _ => None,
                };
            }
            if let Some(index) = lower.strip_prefix('p') {
                let index = u16::from_str_radix(index, 16).ok()?;
                if index < 0x40 && lower.len() == 3 {
                    let [r, g, b] = shared.palette.as_ref()?.rgb(index);
                    return Some([r, g, b, 0xFF]);
                }
                return None;
            }
            NAMED_COLOURS
                .iter()
                .find(|(name, _)| *name == lower)
                .map(|(_, rgba)| rgba.to_be_bytes())
        }
        Value::Table(table) => {
            let component = |name: &str, index: i64, default: u8| -> u8 {
                let value: Value = table
                    .get(name)
                    .ok()
                    .filter(|v: &Value| !v.is_nil())
                    .or_else(|| table.get(index).ok())
                    .unwrap_or(Value::Nil);
                match value {
                    Value::Integer(i) => i.clamp(0, 255) as u8,
                    Value::Number(n) => n.clamp(0.0, 255.0) as u8,
                    _ => default,
                }
            };
            Some([
                component("r", 1, 0),
                component("g", 2, 0),
                component("b", 3, 0),
                component("a", 4, 255),
            ])
        }
        _ => None,
    }
}

/// An optional colour argument: missing or unknown gives `default`.
fn optional_color(shared: &Shared, value: &Value, default: Rgba) -> Rgba {
    if value.is_nil() {
        return default;
    }
    parse_color(shared, value).unwrap_or(default)
}

fn required_color(lua: &Lua, shared: &Shared, value: &Value, function: &str) -> mlua::Result<Rgba> {
    parse_color(shared, value).ok_or_else(|| fail(lua, format!("{function}: invalid colour")))
}

fn gui_table(lua: &Lua, shared: &SharedRef, registries: &Registries) -> mlua::Result<Table> {
    let gui = lua.create_table()?;
    let s = shared.clone();
    let text = lua.create_function(move |lua, args: MultiValue| {
        let x = integer(lua, &arg(&args, 0), 1, "gui.text")?;
        let y = integer(lua, &arg(&args, 1), 2, "gui.text")?;
        let mut message = String::new();
        format_value(lua, &arg(&args, 2), false, &mut message);
        let mut shared = s.borrow_mut();
        let fg = optional_color(&shared, &arg(&args, 3), [255, 255, 255, 255]);
        let bg = optional_color(&shared, &arg(&args, 4), [27, 18, 105, 255]);
        shared.overlay.text(x, y, &message, fg, bg);
        Ok(())
    })?;
    set_all(&gui, &["text", "drawtext"], &text)?;
    let s = shared.clone();
    let rect = lua.create_function(move |lua, args: MultiValue| {
        let mut corners = [0i64; 4];
        for (i, c) in corners.iter_mut().enumerate() {
            *c = integer(lua, &arg(&args, i), i + 1, "gui.box")?;
        }
        let mut shared = s.borrow_mut();
        let fill = optional_color(&shared, &arg(&args, 4), [255, 255, 255, 63]);
        let outline = optional_color(&shared, &arg(&args, 5), [fill[0], fill[1], fill[2], 255]);
        shared.overlay.rect(
            corners[0], corners[1], corners[2], corners[3], fill, outline,
        );
        Ok(())
    })?;
    set_all(&gui, &["box", "drawbox", "rect", "drawrect"], &rect)?;
    let s = shared.clone();
    let line = lua.create_function(move |lua, args: MultiValue| {
        let mut ends = [0i64; 4];
        for (i, c) in ends.iter_mut().enumerate() {
            *c = integer(lua, &arg(&args, i), i + 1, "gui.line")?;
        }
        let mut shared = s.borrow_mut();
        let color = optional_color(&shared, &arg(&args, 4), [255, 255, 255, 255]);
        let skip_first = !matches!(arg(&args, 5), Value::Nil | Value::Boolean(false));
        shared
            .overlay
            .line(ends[0], ends[1], ends[2], ends[3], color, skip_first);
        Ok(())
    })?;
    set_all(&gui, &["line", "drawline"], &line)?;
    let s = shared.clone();
    let pixel = lua.create_function(move |lua, args: MultiValue| {
        let x = integer(lua, &arg(&args, 0), 1, "gui.pixel")?;
        let y = integer(lua, &arg(&args, 1), 2, "gui.pixel")?;
        let mut shared = s.borrow_mut();
        let color = required_color(lua, &shared, &arg(&args, 2), "gui.pixel")?;
        shared.overlay.blend(x, y, color);
        Ok(())
    })?;
    set_all(
        &gui,
        &["pixel", "drawpixel", "setpixel", "writepixel"],
        &pixel,
    )?;
    let s = shared.clone();
    gui.set(
        "getpixel",
        lua.create_function(move |lua, (x, y): (Value, Value)| {
            let x = integer(lua, &x, 1, "gui.getpixel")?;
            let y = integer(lua, &y, 2, "gui.getpixel")?;
            let [r, g, b, a] = s.borrow().overlay.pixel(x, y);
            Ok((r, g, b, a))
        })?,
    )?;
    let s = shared.clone();
    gui.set(
        "parsecolor",
        lua.create_function(move |lua, value: Value| {
            let [r, g, b, a] = required_color(lua, &s.borrow(), &value, "gui.parsecolor")?;
            Ok((r, g, b, a))
        })?,
    )?;
    let s = shared.clone();
    gui.set(
        "opacity",
        lua.create_function(move |lua, value: Value| {
            let value = number(lua, &value, 1, "gui.opacity")?;
            s.borrow_mut().overlay.opacity = value.clamp(0.0, 1.0);
            Ok(())
        })?,
    )?;
    let s = shared.clone();
    gui.set(
        "transparency",
        lua.create_function(move |lua, value: Value| {
            let value = number(lua, &value, 1, "gui.transparency")?;
            s.borrow_mut().overlay.opacity = (1.0 - value / 4.0).clamp(0.0, 1.0);
            Ok(())
        })?,
    )?;
    gui.set(
        "register",
        callback_setter(lua, registries, "gui", "gui.register")?,
    )?;
    gui.set("popup", lua.create_function(|_, _: MultiValue| Ok("ok"))?)?;
    gui.set(
        "savescreenshot",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    gui.set(
        "gdscreenshot",
        lua.create_function(|_, _: MultiValue| Ok(""))?,
    )?;
    gui.set("gdoverlay", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    Ok(gui)
}

// ----- savestate ------------------------------------------------------------------------------

/// A savestate object: an index into `Shared::states`.
#[derive(Debug, Clone, Copy)]
struct StateObject(usize);
impl mlua::UserData for StateObject {}

fn slot_path(shared: &Shared, slot: u8) -> std::path::PathBuf {
    shared
        .save_dir
        .join(format!("{}.state{slot}", shared.rom_stem))
}

fn state_object(lua: &Lua, value: &Value, function: &str) -> mlua::Result<usize> {
    match value {
        Value::UserData(ud) => Ok(ud.borrow::<StateObject>()?.0),
        _ => Err(fail(
            lua,
            format!("{function}: a savestate object is required"),
        )),
    }
}

fn savestate_table(lua: &Lua, shared: &SharedRef, registries: &Registries) -> mlua::Result<Table> {
    let savestate = lua.create_table()?;
    // create: old numbering (1 = slot 0, 2-10 = slots 1-9); object: new (1-9, 10 = slot 0).
    for (name, old_numbering) in [("create", true), ("object", false)] {
        let s = shared.clone();
        savestate.set(
            name,
            lua.create_function(move |lua, n: Value| {
                let slot = match n {
                    Value::Nil => None,
                    n => {
                        let n = integer(lua, &n, 1, name)?;
                        let slot = match (old_numbering, n) {
                            (true, 1) => 0,
                            (true, 2..=10) => n - 1,
                            (false, 1..=9) => n,
                            (false, 10) => 0,
                            _ => {
                                return Err(fail(
                                    lua,
                                    format!("savestate.{name}: invalid slot number {n}"),
                                ))
                            }
                        };
                        Some(slot as u8)
                    }
                };
                let mut shared = s.borrow_mut();
                let data = slot.and_then(|slot| std::fs::read(slot_path(&shared, slot)).ok());
                shared.states.push(StateSlot { data, slot });
                Ok(StateObject(shared.states.len() - 1))
            })?,
        )?;
    }
    let s = shared.clone();
    savestate.set(
        "save",
        lua.create_function(move |lua, object: Value| {
            let index = state_object(lua, &object, "savestate.save")?;
            let at = location(lua);
            let bytes: mlua::LuaString = with_machine(lua, move |lua, machine| {
                let Some(nes) = machine.console() else {
                    return Err(mlua::Error::runtime(format!(
                        "{at}can't call savestate.save() from here"
                    )));
                };
                let bytes = crate::state::save(nes)
                    .map_err(|e| mlua::Error::runtime(format!("{at}savestate.save: {e}")))?;
                Ok(MultiValue::from_vec(vec![Value::String(
                    lua.create_string(bytes)?,
                )]))
            })?;
            s.borrow_mut().states[index].data = Some(bytes.as_bytes().to_vec());
            Ok(())
        })?,
    )?;
    let s = shared.clone();
    savestate.set(
        "load",
        lua.create_function(move |lua, object: Value| {
            let index = state_object(lua, &object, "savestate.load")?;
            let Some(data) = s.borrow().states[index].data.clone() else {
                return Err(fail(lua, "savestate.load: the state is empty"));
            };
            let at = location(lua);
            let s = s.clone();
            with_machine::<()>(lua, move |_, machine| {
                let Some(nes) = machine.console() else {
                    return Err(mlua::Error::runtime(format!(
                        "{at}can't call savestate.load() from here"
                    )));
                };
                crate::state::load(nes, &data)
                    .map_err(|e| mlua::Error::runtime(format!("{at}savestate.load: {e}")))?;
                // The state brings its frame and lag counts (FCEUX restores both).
                let mut shared = s.borrow_mut();
                shared.frame_count = nes.frame_count();
                shared.lag_count = nes.lag_count();
                Ok(MultiValue::new())
            })
        })?,
    )?;
    let s = shared.clone();
    savestate.set(
        "persist",
        lua.create_function(move |lua, object: Value| {
            let index = state_object(lua, &object, "savestate.persist")?;
            let shared = s.borrow();
            let state = &shared.states[index];
            let (Some(slot), Some(data)) = (state.slot, state.data.as_ref()) else {
                return Ok(());
            };
            let path = slot_path(&shared, slot);
            write_atomically(&path, data)
                .map_err(|e| fail(lua, format!("cannot write {}: {e}", path.display())))
        })?,
    )?;
    savestate.set(
        "registersave",
        callback_setter(lua, registries, "save", "savestate.registersave")?,
    )?;
    savestate.set(
        "registerload",
        callback_setter(lua, registries, "load", "savestate.registerload")?,
    )?;
    savestate.set(
        "loadscriptdata",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    Ok(savestate)
}

/// Write through a temporary file and rename it over the target.
fn write_atomically(path: &std::path::Path, data: &[u8]) -> std::io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = std::path::PathBuf::from(temporary);
    std::fs::write(&temporary, data)?;
    std::fs::rename(&temporary, path)
}

// ----- rom, movie, input, zapper, sound, debugger, taseditor ---------------------------------

fn rom_table(lua: &Lua, shared: &SharedRef) -> mlua::Result<Table> {
    let rom = lua.create_table()?;
    let s = shared.clone();
    let readbyte = move |lua: &Lua, index: Value, name: &str| -> mlua::Result<u8> {
        let index = integer(lua, &index, 1, name)?;
        Ok(usize::try_from(index)
            .ok()
            .and_then(|i| s.borrow().rom_file.get(i).copied())
            .unwrap_or(0))
    };
    let read = readbyte.clone();
    let unsigned = lua.create_function(move |lua, i: Value| read(lua, i, "rom.readbyte"))?;
    set_all(&rom, &["readbyte", "readbyteunsigned"], &unsigned)?;
    rom.set(
        "readbytesigned",
        lua.create_function(
            move |lua, i: Value| Ok(readbyte(lua, i, "rom.readbytesigned")? as i8),
        )?,
    )?;
    let s = shared.clone();
    rom.set(
        "writebyte",
        lua.create_function(move |lua, (i, v): (Value, Value)| {
            let i = integer(lua, &i, 1, "rom.writebyte")?;
            let v = integer(lua, &v, 2, "rom.writebyte")? as u8;
            // Changes the script's view of the file only (`rom.readbyte`), not the cartridge.
            if let Some(byte) = usize::try_from(i)
                .ok()
                .and_then(|i| s.borrow_mut().rom_file.get_mut(i).map(|b| *b = v))
            {
                let () = byte;
            }
            Ok(())
        })?,
    )?;
    let s = shared.clone();
    rom.set(
        "gethash",
        lua.create_function(move |lua, kind: Value| {
            let kind = match kind {
                Value::String(k) => k.to_string_lossy().to_ascii_lowercase(),
                _ => String::new(),
            };
            if kind != "md5" {
                return Err(fail(lua, "rom.gethash: only \"md5\" is supported"));
            }
            Ok(s.borrow().rom_md5.clone())
        })?,
    )?;
    set_getter(lua, &rom, "getfilename", shared, |s| s.rom_stem.clone())?;
    Ok(rom)
}

fn movie_table(lua: &Lua, shared: &SharedRef) -> mlua::Result<Table> {
    let movie = lua.create_table()?;
    // FCEUX counts a finished movie as playing (and so as active).
    set_getter(lua, &movie, "active", shared, |s| s.movie.active())?;
    set_getter(lua, &movie, "recording", shared, |s| {
        s.movie.mode == MovieMode::Record
    })?;
    set_getter(lua, &movie, "playing", shared, |s| {
        matches!(s.movie.mode, MovieMode::Playback | MovieMode::Finished)
    })?;
    set_getter(lua, &movie, "mode", shared, |s| match s.movie.mode {
        MovieMode::Inactive => None,
        MovieMode::Playback => Some("playback"),
        MovieMode::Record => Some("record"),
        MovieMode::Finished => Some("finished"),
    })?;
    set_getter(lua, &movie, "framecount", shared, |s| s.frame_count)?;
    let loaded = |s: &SharedRef, lua: &Lua| -> mlua::Result<()> {
        if s.borrow().movie.active() {
            Ok(())
        } else {
            Err(fail(lua, "No movie loaded."))
        }
    };
    let s = shared.clone();
    movie.set(
        "length",
        lua.create_function(move |lua, ()| {
            loaded(&s, lua)?;
            Ok(s.borrow().movie.length)
        })?,
    )?;
    let s = shared.clone();
    movie.set(
        "rerecordcount",
        lua.create_function(move |lua, ()| {
            loaded(&s, lua)?;
            Ok(s.borrow().movie.rerecords)
        })?,
    )?;
    let s = shared.clone();
    let name = lua.create_function(move |lua, ()| {
        loaded(&s, lua)?;
        Ok(s.borrow().movie.name.clone())
    })?;
    set_all(&movie, &["name", "getname", "filename"], &name)?;
    movie.set("readonly", lua.create_function(|_, ()| Ok(true))?)?;
    movie.set("getreadonly", lua.create_function(|_, ()| Ok(true))?)?;
    movie.set(
        "setreadonly",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    movie.set("replay", lua.create_function(|_, _: MultiValue| Ok(false))?)?;
    movie.set("stop", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    movie.set("close", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    movie.set("play", lua.create_function(|_, _: MultiValue| Ok(false))?)?;
    movie.set(
        "playbeginning",
        lua.create_function(|_, _: MultiValue| Ok(false))?,
    )?;
    movie.set(
        "rerecordcounting",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    Ok(movie)
}

fn install_small_tables(lua: &Lua, shared: &SharedRef) -> mlua::Result<()> {
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
    let sound = lua.create_table()?;
    sound.set("get", lua.create_function(|lua, ()| lua.create_table())?)?;
    globals.set("sound", sound)?;
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
