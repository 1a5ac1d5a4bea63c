-- For FCEUX 2.6.5 only (scripts/fceux-record-movie.sh): records the movie of the parity case
-- probe-recorded-by-fceux from power-on while keys are sent to FCEUX's window, with a reset
-- and a power cycle from Lua, then quits. FCEUX records the pads it reads from the keyboard.
movie.record("probe-recorded-by-fceux.fm2", 0, "nes parity suite")
while emu.framecount() < 420 do
  if emu.framecount() == 140 then
    emu.softreset()
  elseif emu.framecount() == 290 then
    emu.poweron()
  end
  emu.frameadvance()
end
movie.stop()
emu.exit()
