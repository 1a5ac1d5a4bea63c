-- rom: roms/probe.nes
-- savestate: anonymous objects, save and load with the frame and lag counts and RAM they
-- bring back, the registersave/registerload callbacks (what they get and when they run),
-- loading an object never saved, and the argument errors.
local log = assert(io.open("parity.log", "w"))
local function w(...)
  local t = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    local kind = type(v)
    t[#t + 1] = (kind == "userdata" or kind == "function") and kind or tostring(v)
  end
  log:write((table.concat(t, " "):gsub("[^%s]*/([^/%s]+%.lua:)", "%1")), "\n")
  log:flush()
end
local function n(...) return select("#", ...), ... end
local function ram_sum()
  local sum = 0
  for a = 0, 0x7FF do sum = (sum * 31 + memory.readbyte(a)) % 1000000007 end
  return sum
end
emu.frameadvance()
for _ = 1, 20 do emu.frameadvance() end
w("registersave", n(savestate.registersave(function(...) w("save callback", n(...)) return 7, "seven" end)))
w("registerload", n(savestate.registerload(function(...) w("load callback", n(...)) end)))
local a = savestate.object()
w("object", type(a))
w("save", n(savestate.save(a)))
local saved_frame, saved_lag, saved_ram = emu.framecount(), emu.lagcount(), ram_sum()
w("saved at", saved_frame, saved_lag, saved_ram)
for _ = 1, 15 do emu.frameadvance() end
w("later", emu.framecount(), emu.lagcount(), ram_sum() == saved_ram)
w("load", n(savestate.load(a)))
w("loaded", emu.framecount(), emu.lagcount(), ram_sum() == saved_ram)
emu.frameadvance()
w("frame after load", emu.framecount(), emu.lagcount())
local b = savestate.create()
w("create", type(b))
w("load unsaved", pcall(savestate.load, b))
w("frame", emu.framecount())
w("save again", n(savestate.save(a)))
w("registersave nil", n(savestate.registersave(nil)))
w("save without callback", n(savestate.save(a)))
w("load again", n(savestate.load(a)))
w("loaded again", emu.framecount(), emu.lagcount())
w("save number", pcall(savestate.save, 5))
w("save table", pcall(savestate.save, {}))
w("load string", pcall(savestate.load, "x"))
w("object 0", pcall(savestate.object, 0))
w("create 0", pcall(savestate.create, 0))
w("create 11", pcall(savestate.create, 11))
w("exit")
log:close()
emu.exit()
