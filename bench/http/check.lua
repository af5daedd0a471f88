-- wrk script: POST the Check body given in $BODY; with $DELAY_MS each connection waits that long
-- between requests (used to hold the load at a fixed fraction of the maximum).
wrk.method = "POST"
wrk.body = os.getenv("BODY")
wrk.headers["Content-Type"] = "application/json"

local pause = tonumber(os.getenv("DELAY_MS") or "0")
if pause > 0 then
  function delay()
    return pause
  end
end
