//! `rom`: the ROM file as the script sees it.

use super::*;

pub(super) fn rom_table(lua: &Lua, shared: &SharedRef) -> mlua::Result<Table> {
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
