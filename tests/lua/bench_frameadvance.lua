-- Benchmark (b): a script that only advances frames.
while true do
  emu.frameadvance()
end
