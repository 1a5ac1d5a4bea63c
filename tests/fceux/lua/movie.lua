-- rom: roms/probe.nes
-- movie: movies/probe.fm2
-- movie and joypad while a movie plays: the movie's state and counts, the read-only
-- toggle, what joypad.get sees and joypad.set changes (nothing: the movie wins), past the
-- movie's end.
local log = assert(io.open("parity.log", "w"))
local function w(...)
  local t = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    -- movie.ispoweron() returns itself in FCEUX 2.6.5 (its C function returns 1 with an
    -- empty stack): the function's identity, not its address.
    t[#t + 1] = v == movie.ispoweron and "movie.ispoweron" or tostring(v)
  end
  log:write((table.concat(t, " "):gsub("[^%s]*/([^/%s]+%.lua:)", "%1")), "\n")
  log:flush()
end
local function n(...) return select("#", ...), ... end
local function p(label, f, ...) w(label, n(pcall(f, ...))) end
local function state(label)
  w(label, emu.framecount(), movie.framecount(), movie.mode(), movie.active(), movie.playing(),
    movie.recording(), movie.length(), movie.rerecordcount(), movie.readonly(),
    movie.ispoweron(), movie.isfromsavestate())
end
state("load")
emu.frameadvance()
state("start")
w("name", (movie.name():match("[^/]+$")), (movie.getname():match("[^/]+$")))
p("emu.readonly", emu.readonly)
p("setreadonly false", movie.setreadonly, false)
p("readonly now", movie.readonly)
p("emu.readonly now", emu.readonly)
p("setreadonly true", emu.setreadonly, true)
for i = 1, 60 do
  joypad.set(1, { B = true })
  emu.frameadvance()
  local pad = joypad.get(1)
  if i % 6 == 0 or pad.A or pad.start then
    w("frame", emu.framecount(), pad.A, pad.B, pad.start, pad.up, joypad.get(2).B)
  end
end
state("mid")
while emu.framecount() < 418 do emu.frameadvance() end
for _ = 1, 6 do
  emu.frameadvance()
  state("end")
end
log:close()
emu.exit()
