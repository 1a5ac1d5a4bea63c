//! `memory`: reads, writes, registers and the exec/write/read hooks.

use super::*;

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

pub(super) fn memory_table(
    lua: &Lua,
    shared: &SharedRef,
    registries: &Registries,
) -> mlua::Result<Table> {
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
        // The high byte's address counts only when it is a number (2.6.5's `lua_type` test).
        let high = match arg(args, 1) {
            Value::Integer(_) | Value::Number(_) => address(lua, args, 1, name)?,
            _ => low.wrapping_add(1),
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
            let len = check_integer(lua, &args, 2)?;
            if len < 0 {
                // FCEUX returns nothing at all (not even an empty string).
                return Ok(MultiValue::new());
            }
            // The range wraps at $FFFF, as in FCEUX. (Its length has a limit only here.)
            let len = len.min(1 << 24) as usize;
            with_machine(lua, move |lua, machine| {
                let bytes: Vec<u8> = (0..len)
                    .map(|i| machine.peek(start.wrapping_add(i as u16)))
                    .collect();
                Ok(MultiValue::from_vec(vec![Value::String(
                    lua.create_string(bytes)?,
                )]))
            })
        })?,
    )?;
    memory.set(
        "writebyte",
        lua.create_function(|lua, args: MultiValue| {
            let addr = address(lua, &args, 0, "writebyte")?;
            let value = check_integer(lua, &args, 2)? as u8;
            // Lua writes never fire hooks: the machine's poke is not a CPU store.
            with_machine::<()>(lua, move |_, machine| {
                machine.poke(addr, value);
                Ok(MultiValue::new())
            })
        })?,
    )?;
    memory.set(
        "getregister",
        lua.create_function(|lua, args: MultiValue| {
            // Any case; another name (a number too, read as a string) gives nil.
            let name = check_string(lua, &args, 1)?
                .to_string_lossy()
                .to_ascii_lowercase();
            with_machine::<Value>(lua, move |_, machine| {
                let value = register_value(&machine.cpu_registers(), &name);
                Ok(MultiValue::from_vec(vec![
                    value.map_or(Value::Nil, |v| Value::Integer(i64::from(v)))
                ]))
            })
        })?,
    )?;
    memory.set(
        "setregister",
        lua.create_function(|lua, args: MultiValue| {
            let name = check_string(lua, &args, 1)?
                .to_string_lossy()
                .to_ascii_lowercase();
            let value = check_integer(lua, &args, 2)?;
            if !REGISTER_NAMES.contains(&name.as_str()) {
                return Ok(());
            }
            with_machine::<()>(lua, move |_, machine| {
                let mut regs = machine.cpu_registers();
                set_register_value(&mut regs, &name, value);
                machine.set_cpu_registers(regs);
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

/// `memory.register*` as FCEUX 2.6.5's `memory_registerHook` takes its arguments (measured in
/// tests/fceux/lua/memory.lua): `(addr, [size,] fn|nil)`, where
/// - a string second or third argument names the CPU and is dropped; `"sub"` (any case) files
///   the hook under the sub-CPU, which an NES does not have, so it never fires;
/// - `addr` is taken to 32 bits; `size` (1 unless the next argument is a number) to 32 signed
///   bits, truncated; a negative size covers the `|size|` bytes below `addr` (so
///   `(0x02FF, -0x100)` is `$01FF-$02FE`), size 0 covers nothing;
/// - nothing wraps at $FFFF or $0000: the range runs on through 32-bit keys, of which only
///   `$0000-$FFFF` are CPU addresses. Key `0xFFFFFFFF` (a range that goes below $0000, or
///   `addr` -1) is special: while it holds a function, no hook of the kind fires at all (it
///   makes FCEUX's cached hooked region end at 0, which contains nothing);
/// - the callback argument must be a function or nil (nil removes); it is an error if absent.
fn register_hook(
    lua: &Lua,
    shared: &SharedRef,
    table: &Table,
    kind: HookKind,
    args: MultiValue,
) -> mlua::Result<()> {
    let mut args: Vec<Value> = args.into_iter().collect();
    let cpu_name = [1, 2]
        .into_iter()
        .find(|&i| matches!(args.get(i), Some(Value::String(_))));
    let sub = match cpu_name.map(|i| args.remove(i)) {
        Some(Value::String(cpu)) => cpu.to_string_lossy().eq_ignore_ascii_case("sub"),
        _ => false,
    };
    let args = MultiValue::from_vec(args);
    let mut first = check_integer(lua, &args, 1)? as u32;
    let mut count = 1u32;
    let mut function_at = 1;
    let size_given = match args.get(1) {
        Some(v @ Value::String(_)) => lua.coerce_number(v.clone())?.is_some(),
        Some(v) => matches!(v, Value::Integer(_) | Value::Number(_)),
        None => false,
    };
    if size_given {
        let size = check_integer(lua, &args, 2)? as i32;
        if size < 0 {
            first = first.wrapping_sub(size.unsigned_abs());
        }
        count = size.unsigned_abs();
        function_at = 2;
    }
    let function = match args.get(function_at) {
        Some(Value::Function(f)) => Some(f.clone()),
        Some(Value::Nil) => None,
        // Absent is an error, unlike nil (FCEUX's `lua_isnil` then `luaL_checktype`).
        other => return Err(type_error(lua, other, function_at + 1, "function")),
    };
    if sub {
        return Ok(());
    }
    let covers = |key: u32| key.wrapping_sub(first) < count;
    let silenced = |table: &Table| -> mlua::Result<bool> {
        Ok(matches!(table.raw_get(SILENCING_KEY)?, Value::Function(_)))
    };
    let was_silenced = silenced(table)?;
    for addr in 0..=u16::MAX {
        if covers(u32::from(addr)) {
            table.raw_set(addr, function.clone())?;
        }
    }
    if covers(u32::MAX) {
        table.raw_set(SILENCING_KEY, function.clone())?;
    }
    let is_silenced = silenced(table)?;
    let mut shared = shared.borrow_mut();
    for addr in 0..=u16::MAX {
        let live = if was_silenced || is_silenced {
            !is_silenced && matches!(table.raw_get(addr)?, Value::Function(_))
        } else if covers(u32::from(addr)) {
            function.is_some()
        } else {
            continue;
        };
        shared.hook_changes.set(kind, addr, live);
    }
    Ok(())
}

/// The hook-table key (`0xFFFFFFFF` as FCEUX's `int` keys have it) that silences a hook kind.
const SILENCING_KEY: i64 = -1;
