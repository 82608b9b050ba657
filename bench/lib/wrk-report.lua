-- Prints wrk's summary as one JSON line so the harness does not parse wrk's human output.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"bytes":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"errors":%d,"status":%d}\n',
    summary.requests, summary.bytes, summary.duration,
    latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
