-- The FCEUX parity log: run unchanged by FCEUX 2.6.5 and by `nes run` (tests/fceux/README.md).
--
-- One line for the boundary the script starts on and one after every frame: the frame
-- count, the lag count, the lag flag (1/0), the movie's mode (p playback, r record,
-- f finished, - none) and frame count, then the CPU RAM bytes that changed since the line
-- before, as runs ADDR:BYTES in hex. It logs until 10 frames past the end of the movie that
-- plays (600 frames without one), into parity.log in the working directory (the script's
-- folder), then quits the emulator.
local log = assert(io.open("parity.log", "w"))
local modes = { playback = "p", record = "r", finished = "f" }
local last = {}

local function line()
  local ram = memory.readbyterange(0, 0x800)
  local parts = { string.format("%d %d %d %s %d", emu.framecount(), emu.lagcount(),
    emu.lagged() and 1 or 0, modes[movie.mode()] or "-", movie.framecount()) }
  local i = 0
  while i < 0x800 do
    if ram:byte(i + 1) == last[i] then
      i = i + 1
    else
      local start, bytes = i, {}
      while i < 0x800 and ram:byte(i + 1) ~= last[i] do
        bytes[#bytes + 1] = string.format("%02x", ram:byte(i + 1))
        last[i] = ram:byte(i + 1)
        i = i + 1
      end
      parts[#parts + 1] = string.format("%03x:%s", start, table.concat(bytes))
    end
  end
  log:write(table.concat(parts, " "), "\n")
end

local frames = 600
if movie.mode() == "playback" then
  frames = movie.length() + 10
end
emu.speedmode("maximum")
line()
while emu.framecount() < frames do
  emu.frameadvance()
  line()
end
log:close()
emu.exit()
