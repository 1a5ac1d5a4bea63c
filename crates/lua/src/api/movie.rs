//! `movie`: where the playing or recording movie stands.

use super::*;

pub(super) fn movie_table(lua: &Lua, shared: &SharedRef) -> mlua::Result<Table> {
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
    // Read-only: the toggle while a movie is open, false without one (FCEUX).
    let readonly = |s: &Shared| s.movie.active() && s.readonly;
    set_getter(lua, &movie, "readonly", shared, readonly)?;
    set_getter(lua, &movie, "getreadonly", shared, readonly)?;
    movie.set("setreadonly", super::emu::readonly_setter(lua, shared)?)?;
    // Movies here start at power-on (FM2 movies anchored to a save state are refused when
    // loaded). FCEUX 2.6.5's two functions `return` the answer as a count of results with
    // nothing pushed: false gives no value, true gives the one below, which is the function
    // itself (tests/fceux/lua/movie.lua). Scripts testing the result see true either way.
    for (name, from_power_on) in [("ispoweron", true), ("isfromsavestate", false)] {
        let s = shared.clone();
        let answer =
            lua.create_function(move |_, ()| Ok(s.borrow().movie.active() && from_power_on))?;
        let function: Function = lua
            .load(
                "local answer = ...\n\
                 local function f() if answer() then return f end end\n\
                 return f",
            )
            .set_name(format!("=movie.{name}"))
            .call(answer)?;
        movie.set(name, function)?;
    }
    // Stopping or restarting a movie from a script is not offered; without a movie FCEUX
    // raises "no movie", as here.
    for name in ["stop", "close"] {
        let s = shared.clone();
        movie.set(
            name,
            lua.create_function(move |lua, _: MultiValue| {
                let message = if s.borrow().movie.active() {
                    format!("movie.{name}() is not supported")
                } else {
                    "no movie".to_owned()
                };
                Err::<(), _>(fail(lua, message))
            })?,
        )?;
    }
    movie.set("replay", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    movie.set("play", lua.create_function(|_, _: MultiValue| Ok(false))?)?;
    movie.set(
        "playbeginning",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    movie.set(
        "rerecordcounting",
        lua.create_function(|_, _: MultiValue| Ok(()))?,
    )?;
    Ok(movie)
}
