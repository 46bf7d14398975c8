-- wrk script: POSTs a JSON payload, giving every report a fresh id on every request, so the
-- daemon stores new rows (the shared payloads carry fixed ids, which after the first request
-- would measure only the duplicate path). Usage: BODY_FILE=... INGEST_KEY=... wrk -s unique-ids.lua URL
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
  math.randomseed(os.time() + tid)
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
