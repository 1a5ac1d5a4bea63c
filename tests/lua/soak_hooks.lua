-- Soak (scripts/soak.sh): a hook-heavy script that allocates every frame, for long runs
-- whose memory must stay flat. Every frame it makes a new savestate object and saves into
-- it (objects are freed when Lua collects them), draws an overlay, reads RAM, sets input,
-- and a write hook over all of CPU RAM plus exec hooks on the interrupt vectors count hits.
local writes, execs = 0, 0
memory.registerwrite(0x0000, 0x800, function() writes = writes + 1 end)
memory.registerexec(memory.readword(0xFFFA), function() execs = execs + 1 end)
memory.registerexec(memory.readword(0xFFFC), function() execs = execs + 1 end)
local every = tonumber(os.getenv("SOAK_REPORT_EVERY") or "") or 100000
while true do
  local state = savestate.object()
  savestate.save(state)
  local bytes = memory.readbyterange(0x0000, 0x100)
  gui.text(8, 8, string.format("frame %d  %d", emu.framecount(), #bytes))
  gui.box(20, 20, 60, 40, "red", "white")
  joypad.set(1, { A = emu.framecount() % 2 == 0, right = true })
  emu.frameadvance()
  if emu.framecount() % every == 0 then
    print(string.format("frame %d: Lua heap %.0f KiB, %d write hooks, %d exec hooks",
      emu.framecount(), collectgarbage("count"), writes, execs))
  end
end
