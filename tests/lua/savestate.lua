-- savestate.*: anonymous and numbered objects, save/load, persist, numbering, callbacks.
-- `arg` is the folder the runner uses for slot files.
local function check(ok, what) if not ok then error(what or "check failed", 2) end end
local anonymous = savestate.create()
memory.writebyte(0x0300, 1)
savestate.save(anonymous)
memory.writebyte(0x0300, 2)
emu.frameadvance()
savestate.load(anonymous)
check(memory.readbyte(0x0300) == 1, "load restores RAM")

local slot3 = savestate.object(3)
savestate.save(slot3)
savestate.persist(slot3)
local file = io.open(arg .. "/scripts.state3", "rb")
check(file ~= nil, "persist writes <rom>.state3")
file:close()
local again = savestate.create(4) -- old numbering: 4 = slot 3
memory.writebyte(0x0300, 9)
savestate.load(again)
check(memory.readbyte(0x0300) == 1, "a numbered object copies the slot file")
check(not pcall(savestate.object, 11), "slots are 1-10")
check(savestate.registersave(function(slot) return slot * 2 end) == nil, "registersave")
check(savestate.registerload(function(slot, value) end) == nil, "registerload")
print("PASS")
