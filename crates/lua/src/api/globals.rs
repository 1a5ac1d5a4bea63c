//! `print`, `tostring` and FCEUX's extra globals (`bit`, `AND`, `SHIFT`, `copytable`, ...).

use super::*;

pub(super) fn install_print(lua: &Lua, shared: &SharedRef) -> mlua::Result<()> {
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

pub(super) fn install_bit(lua: &Lua) -> mlua::Result<()> {
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
