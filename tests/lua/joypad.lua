-- joypad.*: the override rules, against a user holding Select on pad 1 (the runner does).
local function check(ok, what) if not ok then error(what or "check failed", 2) end end
-- FCEUX 2.6.5 runs a script's first slice as it loads it (so the first frameadvance returns
-- before frame 1), and frames 1 and 2 are its start-up frames, without NMI: start at frame 3.
while emu.framecount() < 3 do emu.frameadvance() end
check(joypad.get(1).select == true, "user input passes through")
check(memory.readbyte(0) == 0x20, "the game reads the user's Select")

joypad.set(1, {A = true, select = false, Start = true})
emu.frameadvance()
local t = joypad.read(1)
check(t.A == true and t.select == false and t.start == false, "true / false / case-sensitive")
check(memory.readbyte(0) == 0x80, "the game saw A only")

joypad.write(2, {B = "invert", up = 1})
emu.frameadvance()
check(joypad.get(1).select and not joypad.get(1).A, "an override lasts one frame")
check(joypad.get(2).B == true and joypad.get(2).up == true, "strings and numbers invert")

local down, up = joypad.getdown(1), joypad.getup(1)
check(down.select == true and down.A == nil, "getdown")
check(up.A == false and up.select == nil, "getup")
check(joypad.readdown(1).select and joypad.readup(1).B == false, "readdown / readup")
check(joypad.getimmediate(1) == nil, "getimmediate is nil, as in FCEUX 2.6.5")
check(not pcall(joypad.set, 1, "A"), "set needs a table")
check(not pcall(joypad.get, 5), "players are 1-4")
print("PASS")
