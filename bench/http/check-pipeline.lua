-- wrk script: POST the Check body given in $BODY, $DEPTH requests per write (HTTP/1.1
-- pipelining: the connection sends the next batch once every answer of the last has arrived).
-- The client's cost per request falls with the depth (one write and one read per batch), as in
-- HTTP framework benchmarks; the server parses and answers each request as usual. wrk counts every
-- answer as a request, so req/s stays comparable with check.lua's.
wrk.method = "POST"
wrk.body = os.getenv("BODY")
wrk.headers["Content-Type"] = "application/json"

local depth = tonumber(os.getenv("DEPTH") or "16")
local batch

function init(args)
  local one = wrk.format()
  local parts = {}
  for i = 1, depth do parts[i] = one end
  batch = table.concat(parts)
end

function request()
  return batch
end
