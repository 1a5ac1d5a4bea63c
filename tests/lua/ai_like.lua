-- The shape of NintendoTetrisAI.lua on the runner's mini game: PRG tables read on the first
-- slice, an exec hook that changes X before a level compare, a write hook that pins a value
-- and re-registers itself, and Start pressed with joypad.set until the game runs.
local function check(ok, what) if not ok then error(what or "check failed", 2) end end

local tableValues = {}
for i = 0, 15 do tableValues[i] = memory.readbyte(0x9000 + i) end
check(tableValues[5] == 15 and memory.readbytesigned(0x9010) == -16, "PRG tables")

-- $8123: CPX #$1D with X = level; X = $1E takes the fast branch ($45 = 1).
memory.registerexec(0x8123, function() memory.setregister("x", 0x1E) end)

-- Pin $41 (the game does INC $41 every frame).
local TARGET = 5
local pins = 0
local function pin()
  memory.registerwrite(0x41, nil)
  pins = pins + 1
  if memory.readbyte(0x41) ~= TARGET then memory.writebyte(0x41, TARGET) end
  memory.registerwrite(0x41, pin)
end
memory.registerwrite(0x41, pin)

local frames = 0
while memory.readbyte(0xC0) ~= 4 do
  joypad.set(1, {start = true})
  emu.frameadvance()
  frames = frames + 1
  check(frames < 30, "the game never started")
end
for _ = 1, 5 do emu.frameadvance() end
check(memory.readbyte(0x41) == TARGET, "the write hook pins $41")
check(pins >= 5, "the pin fired every frame")
check(memory.readbyte(0x45) == 1, "the exec hook's X changed the compare")
print("PASS")
