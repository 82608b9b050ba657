/**
 * The two Lua scripts of the fleet's counters (issue 43 item 3), one call per active key per
 * sync, run by EVALSHA in one pipeline. Both read the clock with Redis `TIME`, so every router
 * counts on one timeline, and both answer two numbers as strings (Redis truncates Lua numbers
 * to integers).
 *
 * 1. `rate`: a token bucket per key (hash fields `t` tokens, `at` ms, `born` ms) and the
 *    allowance granted to each router (`g:<id>`, when: `s:<id>`). Refill by the time since `at`
 *    (at most `burst`), subtract what the router consumed since its last sync (the bucket may
 *    go below 0: a debt the next refills pay). What the other routers were granted and may
 *    still spend unseen is held back (grants older than the key's ttl are a gone router's and
 *    are deleted), and so, while the key is young, is the first allowance (burst ÷ N) of each
 *    live router that has not reported yet. At its first report a router keeps what it has not
 *    spent of its first allowance (held back for it by the others, given to nobody else) and
 *    takes its 1/N of the rest beyond it; afterwards its grant is its 1/N of the rest. So the
 *    grants never add up to more than the bucket holds, and the first burst spread evenly uses
 *    all of it (1/N of the whole rest at the first report split each router's own unspent first
 *    allowance N ways: 19 of a burst of 20 passed across two routers, once in a CI run). The key expires once a full refill
 *    has passed without a sync. Reply: the grant and the ms until the bucket's next token.
 * 2. `inFlight`: a hash per key with three fields per router: `h<id>` the slots it holds
 *    (absolute, so a lost sync is repaired by the next one), `c<id>` its cap (what it may hold
 *    until its next sync), `s<id>` when it last said so. What the other live routers may hold
 *    (the larger of held and cap) is held back, and while the key is young, the first cap of
 *    each live router not reported yet; the router's cap is what it holds plus its whole share
 *    of the rest (the remainder going to the routers whose turn it is this second). So the caps
 *    never add up to more than `max`. Fields not refreshed within `ttl` are a dead router's and
 *    are deleted (its slots given back to the fleet); the key expires `ttl` after the last
 *    sync. Reply: the cap and the Redis time in ms.
 */

/**
 * ARGV: tokens per ms, burst, consumed, key ttl ms, router id, live members N, the first
 * allowance (burst ÷ N), the young window ms.
 */
export const RATE_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local used = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local me = ARGV[5]
local n = tonumber(ARGV[6])
local first = tonumber(ARGV[7])
local young = tonumber(ARGV[8])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local all = redis.call('HGETALL', KEYS[1])
local h = {}
for i = 1, #all, 2 do h[all[i]] = all[i + 1] end
local tokens = tonumber(h['t'])
local at = tonumber(h['at'])
local born = tonumber(h['born'])
if tokens == nil or at == nil or born == nil then tokens = burst; at = now; born = now end
if now > at then tokens = math.min(burst, tokens + (now - at) * rate) end
tokens = tokens - used
local others = 0
local reporters = 1
for f, g in pairs(h) do
  if string.sub(f, 1, 2) == 'g:' and f ~= 'g:' .. me then
    local seen = tonumber(h['s:' .. string.sub(f, 3)])
    if seen ~= nil and now - seen <= ttl then
      others = others + math.max(0, tonumber(g))
      reporters = reporters + 1
    else
      redis.call('HDEL', KEYS[1], f, 's:' .. string.sub(f, 3))
    end
  end
end
if now - born < young and n > reporters then others = others + (n - reporters) * first end
local rest = math.max(0, tokens - others)
local own = 0
if h['g:' .. me] == nil then own = math.min(rest, math.max(0, first - used)) end
local grant = own + (rest - own) / n
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(now), 'born', tostring(born),
  'g:' .. me, tostring(grant), 's:' .. me, tostring(now))
redis.call('PEXPIRE', KEYS[1], ttl)
local wait = 0
if tokens < 1 then wait = (1 - tokens) / rate end
return { tostring(grant), tostring(wait) }
`;

/**
 * ARGV: router id, slots it holds, field ttl ms, live members N, the first cap (⌈max ÷ N⌉),
 * the young window ms, max, this router's rank.
 */
export const IN_FLIGHT_SCRIPT = `
local me = ARGV[1]
local held = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
local first = tonumber(ARGV[5])
local young = tonumber(ARGV[6])
local max = tonumber(ARGV[7])
local rank = tonumber(ARGV[8])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
local h = {}
for i = 1, #all, 2 do h[all[i]] = all[i + 1] end
local born = tonumber(h['born']) or now
local others = 0
local reporters = 1
for f, v in pairs(h) do
  local c = string.sub(f, 1, 1)
  if c == 'h' and f ~= 'h' .. me then
    local id = string.sub(f, 2)
    local seen = tonumber(h['s' .. id])
    if seen ~= nil and now - seen <= ttl then
      others = others + math.max(tonumber(v), tonumber(h['c' .. id]) or 0)
      reporters = reporters + 1
    else
      redis.call('HDEL', KEYS[1], f, 'c' .. id, 's' .. id)
    end
  end
end
if now - born < young and n > reporters then others = others + (n - reporters) * first end
local free = max - others - held
local share = 0
if free > 0 then
  share = math.floor(free / n)
  if (rank + math.floor(now / 1000)) % n < free - share * n then share = share + 1 end
end
local cap = held + share
redis.call('HSET', KEYS[1], 'born', born, 'h' .. me, held, 'c' .. me, cap, 's' .. me, now)
redis.call('PEXPIRE', KEYS[1], ttl)
return { tostring(cap), tostring(now) }
`;
