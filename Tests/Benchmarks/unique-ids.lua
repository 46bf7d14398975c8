-- wrk script: POSTs a JSON payload, giving every report a fresh id on every request, so the
-- daemon stores new rows (payloads/*.json carry fixed ids, which after the first request would
-- measure only the duplicate path). It rewrites every `"id": "<uuid>"` (the payloads' formatting:
-- one space after the colon); session_id and install_id are left as they are.
-- Usage: BODY_FILE=... INGEST_KEY=... wrk -s unique-ids.lua URL
local counter = 0
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)  -- a global in that thread's own Lua state
end

function init(args)
  local file = io.open(os.getenv("BODY_FILE"), "r")
  template = file:read("*a")
  file:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("INGEST_KEY")
  -- Seeded per thread and run from /dev/urandom when readable.
  local seed = os.time() + tid
  local urandom = io.open("/dev/urandom", "rb")
  if urandom then
    local a, b, c = urandom:read(3):byte(1, 3)
    urandom:close()
    seed = a * 65536 + b * 256 + c
  end
  math.randomseed(seed)
  -- The template cut once at its ids: request() joins the pieces around fresh ids, where a
  -- gsub over the whole body (128 KB for batch100) cost wrk about 10 µs of CPU per report,
  -- a third of what the daemon spends, on the same two cores.
  pieces = {}
  local at = 1
  while true do
    local first, last = template:find('"id": "[%x%-]+"', at)
    if not first then break end
    table.insert(pieces, template:sub(at, first - 1))
    at = last + 1
  end
  table.insert(pieces, template:sub(at))
end

-- IDS=time (default): UUID v7 as WatchdogKit makes them, the time first (here seconds since the
-- epoch and the request number, so ids of one thread increase), so rows land near the right edge
-- of the id index. IDS=random: UUID v4 with 82 random leading bits, as a client that makes
-- random ids would send, so rows land at random places of the id index. Either way the last 40
-- bits are the thread, this request's number and the report's place in the body, so no id
-- repeats within a run whatever the random numbers.
local random_ids = os.getenv("IDS") == "random"
local function fresh_id(n)
  if random_ids then
    return string.format('"id": "%04x%04x-%04x-4%03x-%04x-%02x%02x%08x"',
      math.random(0, 0xffff), math.random(0, 0xffff), math.random(0, 0xffff), math.random(0, 0xfff),
      0x8000 + math.random(0, 0x3fff), tid % 256, math.random(0, 0xff), (counter * 512 + n) % 0x100000000)
  end
  local ms = os.time() * 1000 + counter % 1000
  return string.format('"id": "%08x-%04x-7%03x-%04x-%02x%02x%08x"',
    math.floor(ms / 65536) % 0x100000000, ms % 65536, math.random(0, 0xfff),
    0x8000 + math.random(0, 0x3fff), tid % 256, math.random(0, 0xff), (counter * 512 + n) % 0x100000000)
end

function request()
  counter = counter + 1
  local parts = { pieces[1] }
  for n = 2, #pieces do
    parts[#parts + 1] = fresh_id(n - 1)
    parts[#parts + 1] = pieces[n]
  end
  return wrk.format(nil, nil, nil, table.concat(parts))
end

-- Answers other than 2xx, counted per status in each thread (with the first one's body) and
-- printed by done() as "status NNN: COUNT (first body: ...)" lines.
bad = {}
first_bad = nil

function response(status, headers, body)
  if status >= 300 then
    bad[status] = (bad[status] or 0) + 1
    if first_bad == nil then first_bad = string.format("%d %s", status, string.sub(body or "", 1, 200)) end
  end
end

function done(summary, latency, requests)
  local totals, example = {}, nil
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("bad") or {}) do totals[status] = (totals[status] or 0) + count end
    example = example or thread:get("first_bad")
  end
  for status, count in pairs(totals) do io.write(string.format("status %d: %d\n", status, count)) end
  if example then io.write("first non-2xx: " .. example .. "\n") end
end
