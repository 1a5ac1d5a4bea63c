-- Benchmark (c): frameadvance plus 2 exec and 2 write hooks that games hit a few times per
-- frame: the NMI and IRQ handler entries, and the scroll ($2005) and OAM DMA ($4014) writes.
local hits = 0
local function count() hits = hits + 1 end
memory.registerexec(memory.readword(0xFFFA), count)
memory.registerexec(memory.readword(0xFFFE), count)
memory.registerwrite(0x2005, count)
memory.registerwrite(0x4014, count)
emu.registerexit(function()
  print(string.format("hook calls: %d in %d frames", hits, emu.framecount()))
end)
while true do
  emu.frameadvance()
end
