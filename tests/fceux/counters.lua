-- Frame and lag counts around what a script does to the console (tests/fceux/README.md):
-- emu.poweron, emu.softreset, savestate save and load, emu.setlagflag, and the counts
-- registerbefore, registerafter and a memory hook see. Runs unchanged in FCEUX 2.6.5 and in
-- `nes run`, without a movie, on roms/probe.nes; one line per event into parity.log.
local log = assert(io.open("parity.log", "w"))
local function note(what)
  log:write(string.format("%s %d %d %s %s %d %02x%02x\n", what, emu.framecount(),
    emu.lagcount(), tostring(emu.lagged()), tostring(movie.mode()), movie.framecount(),
    memory.readbyte(0x0700), memory.readbyte(0x0703)))
end

emu.registerbefore(function()
  local frame = emu.framecount()
  if frame == 2 then
    emu.setlagflag(false) -- an inactive frame: no read, yet not a lag frame
  end
  if frame % 7 == 0 then
    note("before")
  end
end)
emu.registerafter(function()
  local frame = emu.framecount()
  if frame == 11 then
    emu.setlagflag(true) -- the game read the pad, yet a lag frame: counted after this
  end
  if frame % 7 == 0 or frame == 11 then
    note("after")
  end
end)
memory.registerexec(0xC100, function()
  if emu.framecount() % 5 == 0 then
    note("nmi")
  end
end)

emu.speedmode("maximum")
note("load")
local function frames(n, what)
  for _ = 1, n do
    emu.frameadvance()
    note(what)
  end
end
frames(16, "frame")
local state = savestate.create()
savestate.save(state)
note("saved")
frames(5, "frame")
emu.softreset()
note("softreset")
frames(6, "frame")
emu.poweron()
note("poweron")
frames(6, "frame")
savestate.load(state)
note("loaded")
frames(6, "frame")
log:close()
emu.exit()
