-- rom: roms/black.nes
-- FCEUX's tostring (print formats its arguments the same way): numbers, strings, booleans,
-- nil, tables (flat, nested, keys of every kind, cycles at several depths), functions and
-- several arguments. One line per value in parity.log.
local log = assert(io.open("parity.log", "w"))
local function show(label, ...)
  log:write(label, ": ", tostring(...), "\n")
end
local function address_free(text)
  -- Function and userdata addresses differ between runs: keep only the kind.
  return (text:gsub("0x%x+", "ADDR"):gsub(": %x%x%x%x%x%x+", ": ADDR"))
end

show("integer", 42)
show("negative", -7)
show("fraction", 1.5)
show("third", 1 / 3)
show("large", 2 ^ 53)
show("huge", 1e300 * 10)
show("minus huge", -1e300 * 10)
show("nan", 0 / 0)
show("tiny", 1e-310)
show("string", "text")
show("empty string", "")
show("true", true)
show("false", false)
show("nil", nil)
show("two", 1, 2)
show("three", "a", nil, true)
log:write("no argument: ", select("#", tostring()), " ", tostring(tostring()), "\n")
show("empty table", {})
show("array", { 1, 2, 3 })
show("holes", { 1, nil, 3 })
show("mixed", { 1, 2, a = 3 })
show("string keys", { ["a b"] = 1 })
show("keyword key", { ["end"] = 1 })
show("number key", { [10] = "ten" })
show("fraction key", { [1.5] = "x" })
show("bool key", { [true] = 1 })
show("nested", { inner = { deeper = { 1 } } })
show("string values", { "x", y = "z" })
show("bool values", { a = true, b = false })
local cycle = { name = "c" }
cycle.self = cycle
show("cycle", cycle)
local deep = { a = { b = { c = {} } } }
deep.a.b.c.back = deep
show("cycle 4", deep)
local twice = {}
local shared = { 1 }
twice.first = shared
twice.second = shared
show("shared", twice)
log:write("function: ", address_free(tostring(print)), "\n")
log:write("table in table: ", address_free(tostring({ f = print })), "\n")
local big = {}
for i = 1, 40 do big[i] = i * 1000 end
show("long", big)
local wide = {}
for i = 1, 300 do wide[i] = "abcdefghij" end
local text = tostring(wide)
log:write("very long: ", #text, " ", text:sub(1, 40), " ... ", text:sub(-40), "\n")
log:close()
emu.frameadvance()
emu.exit()
