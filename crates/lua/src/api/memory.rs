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
