//! `sound`: the APU's channels as FCEUX reports them.

use super::*;

pub(super) fn sound_table(lua: &Lua, _shared: &SharedRef) -> mlua::Result<Table> {
    let sound = lua.create_table()?;
    sound.set("get", lua.create_function(|lua, ()| lua.create_table())?)?;
    Ok(sound)
}
