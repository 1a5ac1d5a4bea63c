-- rom: roms/probe.nes
-- emu.frameadvance() outside the main loop, as FCEUX 2.6.5 has it: one "waiting" flag, set
-- by each call and cleared when the main coroutine is resumed for a frame. In a callback
-- during a frame it raises; in a coroutine of the script's it is a plain yield that leaves the
-- flag set, so every later call raises. A bare coroutine.yield() of the main chunk is tested
-- by the Lua crate's tests (FCEUX then never resumes it, and never exits).
local log = assert(io.open("parity.log", "w"))
local function w(...)
  local t = {}
  for i = 1, select("#", ...) do t[#t + 1] = tostring((select(i, ...))) end
  -- Chunk names are absolute paths: keep the file name.
  log:write((table.concat(t, " "):gsub("[^%s]*/([^/%s]+%.lua:)", "%1")), "\n")
  log:flush()
end
w("load", emu.framecount())
emu.frameadvance()
w("start", emu.framecount())
w("yield values", coroutine.resume(coroutine.create(function(a) return coroutine.yield(a, 2) end), 1))
local plain = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end)
w("wrap", plain(1), plain(5))
emu.registerbefore(function()
  w("before", emu.framecount(), pcall(emu.frameadvance))
  w("before direct", emu.framecount(), pcall(function() emu.frameadvance() end))
  emu.registerbefore(nil)
end)
emu.frameadvance()
w("after before", emu.framecount())
emu.frameadvance()
w("next", emu.framecount())
local co = coroutine.create(function(a)
  w("inside", a, emu.framecount())
  local n = select("#", emu.frameadvance())
  w("inside got", n, emu.framecount())
  w("inside again", pcall(emu.frameadvance))
  return "done"
end)
w("resume1", coroutine.resume(co, "x"))
w("status", coroutine.status(co), emu.framecount())
w("resume2", coroutine.resume(co, "y", "z"))
w("status2", coroutine.status(co), emu.framecount())
w("main fa", pcall(emu.frameadvance))
w("main fa2", pcall(function() emu.frameadvance() end))
w("exit")
log:close()
emu.exit()
