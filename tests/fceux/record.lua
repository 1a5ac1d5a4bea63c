-- Drives `nes run --record` for the parity case probe-recorded-here (tests/fceux/README.md):
-- presses on both pads through joypad.set, a reset and a power cycle, all recorded.
while true do
  local frame = emu.framecount()
  if frame % 9 < 3 then
    joypad.set(1, { A = true, right = frame % 2 == 0 })
  end
  if frame % 13 == 4 then
    joypad.set(2, { start = true, select = true })
  end
  if frame == 100 then
    emu.softreset()
  elseif frame == 200 then
    emu.poweron()
  end
  emu.frameadvance()
end
