-- An error in a memory hook: the script stops with file:line, registerexit runs once.
emu.registerexit(function() print("exit") end)
memory.registerwrite(0x10, function(addr)
  error("bad value at " .. addr)
end)
