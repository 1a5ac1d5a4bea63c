//! `print`, `tostring` and FCEUX's extra globals (`bit`, `AND`, `SHIFT`, `copytable`, ...).

use super::*;

pub(super) fn install_print(lua: &Lua, shared: &SharedRef) -> mlua::Result<()> {
    let globals = lua.globals();
    let out = shared.clone();
    let print = lua.create_function(move |lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        let line = format_args(lua, &args);
        out.borrow_mut().print_line(&line);
        Ok(())
    })?;
    globals.set("print", print)?;
    // FCEUX's tostring is its print's formatting, of all its arguments.
    let tostring = lua.create_function(|lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        lua.create_string(format_args(lua, &args))
    })?;
    globals.set("tostring", tostring)?;
    Ok(())
}

/// `os.exit([code])`: FCEUX's process ends at once, so what the script printed up to it is
/// all there is. Here the script unwinds (no `pcall` catches it, no `registerexit` runs) and
/// the run ends with `code` as its exit status (0 without one), after the current frame.
pub(super) fn install_os_exit(lua: &Lua, shared: &SharedRef) -> mlua::Result<()> {
    let os: Table = lua.globals().get("os")?;
    let s = shared.clone();
    let exit = lua.create_function(move |lua, args: MultiValue| -> mlua::Result<()> {
        // Lua 5.1's `luaL_optint(L, 1, EXIT_SUCCESS)`.
        let status = match args.front() {
            None | Some(Value::Nil) => 0,
            Some(_) => check_integer(lua, &args, 1)? as i32,
        };
        let mut shared = s.borrow_mut();
        shared.exit_requested = true;
        shared.exit_status = Some(status);
        Err(mlua::Error::runtime("os.exit"))
    })?;
    os.set("exit", exit)
}

/// Whether the script called `os.exit` or the watchdog is stopping it: the error wrappers
/// let that error through.
pub(super) fn exiting_probe(lua: &Lua, shared: &SharedRef) -> mlua::Result<Function> {
    let s = shared.clone();
    lua.create_function(move |lua, ()| {
        Ok(s.borrow().exit_status.is_some() || crate::watchdog::stopping(lua))
    })
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
        lua.create_function(|lua, args: MultiValue| {
            let n = bitlib::to_bit(check_number(lua, &args, 1)?) as u32;
            let s = check_integer(lua, &args, 2)?;
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
            for position in 1..=args.len() {
                let bit = check_integer(lua, &args, position)?;
                if (0..32).contains(&bit) {
                    mask |= 1 << bit;
                }
            }
            Ok(mask as i32)
        })?,
    )?;
    globals.set(
        "tobitstring",
        lua.create_function(|lua, args: MultiValue| {
            let n = bitlib::to_bit(check_number(lua, &args, 1)?) as u8;
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
