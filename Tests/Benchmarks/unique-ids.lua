-- wrk script: POSTs a JSON payload, giving every report a fresh id on every request, so the
-- daemon stores new rows (payloads/*.json carry fixed ids, which after the first request would
-- measure only the duplicate path). It rewrites every `"id": "<uuid>"` (the payloads' formatting:
-- one space after the colon); session_id and install_id are left as they are.
-- Usage: BODY_FILE=... INGEST_KEY=... wrk -s unique-ids.lua URL
local counter = 0
local threads_started = 0

function setup(thread)
  threads_started = threads_started + 1
  thread:set("tid", threads_started)  -- a global in that thread's own Lua state
end

function init(args)
  local file = io.open(os.getenv("BODY_FILE"), "r")
  template = file:read("*a")
  file:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("INGEST_KEY")
  -- 24 random bits per thread and run (from /dev/urandom when readable), so runs do not repeat ids.
  local seed = os.time() + tid
  local urandom = io.open("/dev/urandom", "rb")
  if urandom then
    local a, b, c = urandom:read(3):byte(1, 3)
    urandom:close()
    seed = a * 65536 + b * 256 + c
  end
  math.randomseed(seed)
  prefix = string.format("%02x%06x", tid, math.random(0, 0xffffff))
end

function request()
  counter = counter + 1
  local n = 0
  local body = template:gsub('"id": "[%x%-]+"', function()
    n = n + 1
    return string.format('"id": "%s-%04x-4000-8000-%012x"', prefix, n % 0xffff, counter)
  end)
  return wrk.format(nil, nil, nil, body)
end
