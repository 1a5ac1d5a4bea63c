-- test_rom: apu/apu_test/rom_singles/7-dmc_basics.nes
-- sound.get() at the end of each of the first 60 frames: the DMC's length and loop latches and
-- playing state as the test ROM's own code drives them, DMA fetches included, then its closing
-- beep.
-- One line a frame, every number with %.17g (sound.lua covers the table's layout).
local log = assert(io.open("parity.log", "w"))
local channels = {
  { "square1", { "volume", "frequency", "midikey", "duty" } },
  { "square2", { "volume", "frequency", "midikey", "duty" } },
  { "triangle", { "volume", "frequency", "midikey" } },
  { "noise", { "volume", "frequency", "midikey", "short" } },
  { "dpcm", { "volume", "frequency", "midikey", "dmcaddress", "dmcsize", "dmcloop", "dmcseed" } },
}
for frame = 1, 60 do
  emu.frameadvance()
  local rp2a03 = sound.get().rp2a03
  local parts = { "f" .. frame }
  for _, channel in ipairs(channels) do
    local t = rp2a03[channel[1]]
    local values = { channel[1] }
    for _, key in ipairs(channel[2]) do
      local value = t[key]
      if type(value) == "number" then
        value = string.format("%.17g", value)
      end
      values[#values + 1] = tostring(value)
    end
    values[#values + 1] = "r" .. t.regs.frequency
    parts[#parts + 1] = table.concat(values, " ")
  end
  log:write(table.concat(parts, " | "), "\n")
end
log:close()
emu.frameadvance()
emu.exit()
