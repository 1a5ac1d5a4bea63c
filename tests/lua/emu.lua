-- emu.*: frame loop, counters, speed, pause, reset, messages, screen pixels, callbacks.
local function check(ok, what) if not ok then error(what or "check failed", 2) end end
-- FCEUX 2.6.5 runs a script's first slice as it loads it (so the first frameadvance returns
-- before frame 1), and frames 1 and 2 are its start-up frames, without NMI: start at frame 3.
while emu.framecount() < 3 do emu.frameadvance() end
-- FCEU holds the same functions in a table of its own (FCEUX 2.6.5).
check(FCEU ~= emu and FCEU.framecount == emu.framecount, "FCEU alias")
check(emu.emulating(), "emulating")
local f0 = emu.framecount()
emu.speedmode("maximum")
emu.speedmode("Normal")
check(not pcall(emu.speedmode, "warp"), "unknown speed")
local befores, afters = 0, 0
check(emu.registerbefore(function() befores = befores + 1 end) == nil, "no previous callback")
emu.registerafter(function() afters = afters + 1 end)
emu.registerexit(function() print("exit ran") end)
emu.frameadvance()
check(emu.framecount() == f0 + 1 and befores == 1 and afters == 1, "one frame, one of each")
emu.frameadvance()
emu.frameadvance()
check(emu.lagged() == false, "the test ROM polls the pad every frame")
local lag = emu.lagcount()
emu.setlagflag(true)
check(emu.lagged() == true, "setlagflag")
check(emu.lagcount() == lag, "lagcount counts after registerafter")

emu.pause()
check(emu.paused(), "paused")
emu.unpause()
check(not emu.paused(), "unpaused")

emu.message("hello")
emu.print("printed", 1)
local r, g, b, index = emu.getscreenpixel(0, 0, true)
check(type(r) == "number" and index >= 0 and index < 64, "getscreenpixel")
check(not pcall(emu.getscreenpixel, 256, 0), "x out of range")

emu.softreset()
check(emu.framecount() == 0, "softreset zeroes framecount")
emu.frameadvance()
check(emu.framecount() == 1, "counting again")
emu.poweron()
check(emu.framecount() == 0 and emu.lagcount() == 0, "poweron zeroes both counters")
emu.frameadvance()
local calls = 0
emu.exec_count(3, function() calls = calls + 1 end)
check(calls == 3, "exec_count runs the function count times")
check(emu.readonly() == true and movie.readonly() == false, "read-only toggle, no movie")
emu.setrenderplanes(true, true)
print("PASS")
