-- wrk script: POST the Check body given in $BODY. With $TARGET_RPS the requests follow one
-- schedule shared by the thread's connections: each request claims the next slot, 1/TARGET_RPS
-- after the previous one, and its connection waits for it. The offered load is then exactly the
-- target whatever the latency (a closed loop with a fixed delay drifts with it), up to the
-- number of connections. wrk's timers have 1 ms resolution, so requests leave in per-millisecond
-- groups; the schedule keeps the long-run rate exact.
wrk.method = "POST"
wrk.body = os.getenv("BODY")
wrk.headers["Content-Type"] = "application/json"

local rate = tonumber(os.getenv("TARGET_RPS") or "0")
if rate > 0 then
  local ffi = require("ffi")
  ffi.cdef [[
    typedef struct { long tv_sec; long tv_nsec; } latch_timespec;
    int clock_gettime(int clk, latch_timespec *tp);
  ]]
  local ts = ffi.new("latch_timespec")
  local CLOCK_MONOTONIC = 1
  local function now_ms()
    ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
    return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
  end
  local interval = 1000 / rate
  local due = 0
  function delay()
    local t = now_ms()
    -- After a stall (the machine paused wrk) the schedule restarts from now instead of bursting
    -- the backlog: the load stays the target, not a catch-up spike.
    if due < t - 5 then due = t end
    due = due + interval
    local d = due - t
    if d < 0 then return 0 end
    return d
  end
end
