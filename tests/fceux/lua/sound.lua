-- rom: roms/black.nes
-- sound.get(): the APU channels as FCEUX reports them. The script plays every channel through
-- its states by writing the APU registers (memory.writebyte reaches them in both emulators)
-- and logs the table at the end of every frame ("f"), and right after a frame's writes ("w"),
-- every number with %.17g so that the last bit counts. Not right after a $4017 write: FCEUX
-- applies its immediate clock inside the write, the APU (as the hardware) 3-4 cycles later.
local log = assert(io.open("parity.log", "w"))

local function number(value)
  if type(value) == "number" then
    return string.format("%.17g", value)
  end
  return tostring(value)
end

-- Channel fields in a fixed order (pairs order is checked separately below).
local fields = {
  { "square1", { "volume", "frequency", "midikey", "duty" } },
  { "square2", { "volume", "frequency", "midikey", "duty" } },
  { "triangle", { "volume", "frequency", "midikey" } },
  { "noise", { "volume", "frequency", "midikey", "short" } },
  { "dpcm", { "volume", "frequency", "midikey", "dmcaddress", "dmcsize", "dmcloop", "dmcseed" } },
}

local function describe(label)
  local rp = sound.get().rp2a03
  local parts = { label }
  for _, channel in ipairs(fields) do
    local name, keys = channel[1], channel[2]
    local t = rp[name]
    local values = {}
    for _, key in ipairs(keys) do
      values[#values + 1] = number(t[key])
    end
    values[#values + 1] = "r" .. number(t.regs.frequency)
    parts[#parts + 1] = name .. " " .. table.concat(values, " ")
  end
  log:write(table.concat(parts, " | "), "\n")
end

-- Every key and value type, in pairs order (FCEUX's table layout), and tostring of the table.
local function layout(value, prefix)
  for key, inner in pairs(value) do
    if type(inner) == "table" then
      layout(inner, prefix .. key .. ".")
    else
      log:write(prefix, key, " ", type(inner), "\n")
    end
  end
end
layout(sound.get(), "")
log:write("tostring: ", tostring(sound.get()), "\n")

-- Frame number -> register writes {address, value, ...}.
local schedule = {}
local function at(frame, writes)
  schedule[frame] = writes
end
local frame_counter_writes = {}
local function frame_counter(frame, value)
  schedule[frame] = { 0x4017, value }
  frame_counter_writes[frame] = true
end

-- Pulse 1: constant volume, duties, the period limits and the sweep unit's mute.
at(4, { 0x4015, 0x0F, 0x4000, 0x3F, 0x4001, 0x08, 0x4002, 0x00, 0x4003, 0x00 })
at(6, { 0x4002, 0x07 })
at(8, { 0x4002, 0x08, 0x4000, 0x7A })
at(10, { 0x4000, 0xB5, 0x4002, 0xFF, 0x4003, 0x03 })
at(12, { 0x4001, 0x00 })
at(14, { 0x4003, 0x04 })
at(16, { 0x4001, 0x03 })
at(18, { 0x4002, 0xFF, 0x4003, 0x07 })
at(20, { 0x4001, 0x0F, 0x4000, 0xF1 })
-- Sweep down (enabled, divider 7, negate, shift 1), then up (divider 2, shift 2) to the mute.
at(22, { 0x4001, 0xF9 })
at(60, { 0x4002, 0x00, 0x4003, 0x01, 0x4001, 0xA2 })
-- Envelope decay (speed 3) with a length of 30, then a looping envelope (speed 1).
at(90, { 0x4001, 0x08, 0x4000, 0x83, 0x4002, 0xFD, 0x4003, 0xF8 })
at(130, { 0x4000, 0xA1, 0x4003, 0x00 })
-- The sweep enabled with shift 0 changes nothing; period $500 is muted by its target.
at(150, { 0x4000, 0x3C, 0x4001, 0x80, 0x4002, 0x00, 0x4003, 0x05 })
at(154, { 0x4002, 0xFF, 0x4003, 0x03 })
-- A length of 2, then the channel disabled.
at(160, { 0x4000, 0x1F, 0x4003, 0x18 })
at(166, { 0x4003, 0x08 })
at(170, { 0x4015, 0x0E })
at(172, { 0x4003, 0x08 })

-- Pulse 2: the same sweeps (its negate subtracts one less) and envelopes.
at(180, { 0x4004, 0x3F, 0x4005, 0x08, 0x4006, 0x07, 0x4007, 0x00 })
at(182, { 0x4006, 0x08, 0x4004, 0x4C })
at(184, { 0x4005, 0x00, 0x4006, 0x00, 0x4007, 0x04 })
at(186, { 0x4005, 0xF9, 0x4006, 0xFF, 0x4007, 0x07, 0x4004, 0xF8 })
at(224, { 0x4006, 0x00, 0x4007, 0x01, 0x4005, 0xA2 })
at(250, { 0x4005, 0x08, 0x4004, 0x85, 0x4007, 0xF8 })
at(290, { 0x4004, 0xA0, 0x4007, 0x00 })
at(300, { 0x4004, 0x1F, 0x4007, 0x18 })
at(306, { 0x4015, 0x0C })

-- Triangle: linear counter under control, counting down, reloads, short lengths, periods.
at(310, { 0x4008, 0x8A, 0x400A, 0x40, 0x400B, 0x08 })
at(314, { 0x4008, 0x0A })
at(318, { 0x400B, 0x08 })
at(324, { 0x4008, 0xFF, 0x400A, 0x00, 0x400B, 0x00 })
at(326, { 0x400A, 0x01 })
at(328, { 0x400A, 0xFF, 0x400B, 0x07 })
at(330, { 0x4008, 0x7F, 0x400B, 0x18 })
at(336, { 0x4008, 0x80, 0x400B, 0x08 })
at(340, { 0x4015, 0x08 })

-- Noise: every period in both modes at constant volume, then envelopes.
local frame = 344
at(frame, { 0x4015, 0x08, 0x400C, 0x3F, 0x400E, 0x00, 0x400F, 0x08 })
for period = 1, 31 do
  frame = frame + 1
  at(frame, { 0x400E, period % 16 + (period >= 16 and 0x80 or 0) })
end
at(380, { 0x400C, 0x02, 0x400E, 0x83, 0x400F, 0xF8 })
at(420, { 0x400C, 0x20, 0x400F, 0x00 })
at(440, { 0x400C, 0x1A, 0x400F, 0x18 })
at(432, { 0x400C, 0x00, 0x400F, 0x00 })
at(446, { 0x4015, 0x00 })

-- DMC: every rate, the address and length latches, the loop flag, $4011.
frame = 450
for rate = 0, 15 do
  at(frame + rate, { 0x4010, rate + (rate % 3 == 0 and 0x40 or 0),
    0x4011, rate * 9, 0x4012, rate * 17, 0x4013, 255 - rate * 16 })
end
at(470, { 0x4011, 0xFF, 0x4012, 0xFF, 0x4013, 0xFF })
-- A one-byte sample, then a looping one, stopped by $4015; then 257 bytes at the top rate.
at(474, { 0x4010, 0x00, 0x4011, 0x40, 0x4012, 0x00, 0x4013, 0x00, 0x4015, 0x10 })
at(478, { 0x4010, 0x4F, 0x4015, 0x10 })
at(484, { 0x4015, 0x00 })
at(488, { 0x4010, 0x0F, 0x4013, 0x10, 0x4015, 0x10 })
at(496, { 0x4010, 0x40, 0x4013, 0x00, 0x4015, 0x10 })
at(500, { 0x4011, 0x00 })
at(504, { 0x4015, 0x00 })

-- Everything at once, then the frame counter's modes (a 5-step write clocks at once).
at(510, { 0x4015, 0x1F, 0x4000, 0x84, 0x4002, 0x80, 0x4003, 0x50, 0x4004, 0xC2, 0x4006, 0x40,
  0x4007, 0x60, 0x4008, 0x20, 0x400A, 0x10, 0x400B, 0x40, 0x400C, 0x06, 0x400E, 0x8C,
  0x400F, 0x40, 0x4010, 0x4E, 0x4012, 0x01, 0x4013, 0x02 })
frame_counter(520, 0x80)
frame_counter(521, 0x80)
frame_counter(522, 0xC0)
frame_counter(530, 0x00)
at(540, { 0x4015, 0x00 })

local last = 550
for n = 0, last do
  local writes = schedule[n]
  if writes then
    for i = 1, #writes, 2 do
      memory.writebyte(writes[i], writes[i + 1])
    end
    if not frame_counter_writes[n] then
      describe("w" .. n)
    end
  end
  emu.frameadvance()
  describe("f" .. n)
  if n == 515 then
    log:write("tostring: ", tostring(sound.get()), "\n")
  end
end
log:write("tostring: ", tostring(sound.get()), "\n")
log:close()
emu.frameadvance()
emu.exit()
