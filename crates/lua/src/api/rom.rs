//! `rom`: the ROM image as the script sees it: the iNES header, then the cartridge's PRG and
//! CHR as the console runs them (patches by `rom.writebyte` included).

use mlua::IntoLuaMulti;

use super::*;

/// The iNES header's length: ROM offsets count from the file's start, trainer left out.
const HEADER: usize = 16;

/// `rom.readbyte(i)` as FCEUX 2.6.5's `FCEU_ReadRomByte` has it: below 16 the header's byte,
/// then PRG ROM, then CHR ROM (or the board's CHR RAM, as it is now), then 0; `i` is taken
/// to 32 bits (`-1` reads 0, `0x100000004` the header's byte 4). Measured in
/// tests/fceux/lua/rom.lua.
fn read(lua: &Lua, shared: &SharedRef, args: &MultiValue) -> mlua::Result<u8> {
    let offset = check_integer(lua, args, 1)? as u32 as usize;
    if offset < HEADER {
        return Ok(shared.borrow().rom_header.get(offset).copied().unwrap_or(0));
    }
    with_machine(lua, move |lua, machine| {
        machine
            .rom_byte(offset - HEADER)
            .unwrap_or(0)
            .into_lua_multi(lua)
    })
}

pub(super) fn rom_table(lua: &Lua, shared: &SharedRef) -> mlua::Result<Table> {
    let rom = lua.create_table()?;
    let s = shared.clone();
    let unsigned = lua.create_function(move |lua, args: MultiValue| read(lua, &s, &args))?;
    set_all(&rom, &["readbyte", "readbyteunsigned"], &unsigned)?;
    let s = shared.clone();
    rom.set(
        "readbytesigned",
        lua.create_function(move |lua, args: MultiValue| Ok(read(lua, &s, &args)? as i8))?,
    )?;
    rom.set(
        "writebyte",
        lua.create_function(|lua, args: MultiValue| {
            let offset = check_integer(lua, &args, 1)? as u32 as usize;
            if offset < HEADER {
                return Err(fail(lua, "rom.writebyte() can't edit the ROM header."));
            }
            let value = check_integer(lua, &args, 2)? as u8;
            // FCEUX patches the ROM buffers the CPU and PPU read from; past the image nothing
            // changes.
            with_machine::<()>(lua, move |_, machine| {
                machine.patch_rom(offset - HEADER, value);
                Ok(MultiValue::new())
            })?;
            // FCEUX's function returns 1 without pushing anything: the call's last argument.
            Ok(args.back().cloned().unwrap_or(Value::Nil))
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
