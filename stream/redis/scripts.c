/* daolease — the Redis medium's layout and Lua scripts.
 *
 * These texts are part of the interoperability contract (docs/redis.md,
 * "Layout"): another implementation that runs the same scripts on the same
 * keys interoperates byte for byte.
 */
#include "stream/redis/handle.h"

const char *const rds_key_suffix[K_COUNT] = {"", ":next", ":id", ":sealed", ":maxlen", ":writer"};

/* The append script. KEYS: stream, next, id, sealed, maxlen, writer.
 * ARGV[1]: the medium id (hex) the writer opened; ARGV[2]: the writer's
 * token ("" when it holds no fence); ARGV[3]: where the fenced writer left
 * K:next ("" when it holds no fence or does not know); ARGV[4…]: the
 * records. Answers the
 * first record's position, or an error whose first word the client maps:
 * DLSNOID / DLSID (DLS_ERR_MEDIUM_ID), DLSSEALED (DLS_ERR_SEALED),
 * DLSFENCED (DLS_ERR_LOCKED: K:writer holds another token than ARGV[2], or
 * none although ARGV[2] is one — stream-format.md rev 4, "a Redis journal is
 * fenced by <key>:writer"), DLSNEXT / DLSENTRY (DLS_ERR_CORRUPT: K:next is
 * missing, not decimal or not above the pos of the stream's last entry, or
 * that entry is not one a reader accepts — not exactly one decimal pos and
 * one rec of 1 … 65536 bytes: a tampered key or an XADD by hand, which
 * would otherwise make the script reuse positions, or append after an
 * entry every reader stops at for good; docs/redis.md, "A broken medium"),
 * DLSLOST (DLS_ERR_CORRUPT: K:next is not ARGV[3] — records the one writer
 * appended are gone, a failover to a replica that lacked them). The
 * checks come before any write, so a refused batch changes nothing. */
const char rds_append_lua[] =
    "local v = redis.call('MGET', KEYS[3], KEYS[4], KEYS[5], KEYS[6])\n"
    "local id, sealed, ml, wr = v[1], v[2], v[3], v[4]\n"
    "if not id then return redis.error_reply('DLSNOID the medium id key is missing') end\n"
    "if id ~= ARGV[1] then return redis.error_reply('DLSID the medium id differs') end\n"
    "if (wr or '') ~= ARGV[2] then\n"
    "  return redis.error_reply('DLSFENCED another writer holds the medium') end\n"
    "if sealed then return redis.error_reply('DLSSEALED the medium is sealed') end\n"
    "local nx = redis.call('GET', KEYS[2])\n"
    "if not nx or not string.match(nx, '^%d+$') then\n"
    "  return redis.error_reply('DLSNEXT the medium next key is missing or not decimal') end\n"
    "if ARGV[3] ~= '' and nx ~= ARGV[3] then\n"
    "  return redis.error_reply('DLSLOST the medium next key is not where its writer left it') end\n"
    "local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]\n"
    "if last then\n"
    "  local f, lp, lr, np, nr = last[2], nil, nil, 0, 0\n"
    "  for i = 1, #f - 1, 2 do\n"
    "    if f[i] == 'pos' then lp = f[i + 1]; np = np + 1\n"
    "    elseif f[i] == 'rec' then lr = f[i + 1]; nr = nr + 1 end\n"
    "  end\n"
    "  if np ~= 1 or not string.match(lp, '^%d+$') then\n"
    "    return redis.error_reply('DLSENTRY the last entry ' .. last[1] .. ' has no decimal pos') end\n"
    "  if nr ~= 1 or #lr == 0 or #lr > 65536 then\n"
    "    return redis.error_reply('DLSENTRY the last entry ' .. last[1] .. ' has no rec') end\n"
    "  if tonumber(lp) >= tonumber(nx) then\n"
    "    return redis.error_reply('DLSNEXT the medium next key is not above the last entry pos') end\n"
    "end\n"
    "local seal = '\\129\\177dao.stream/sealed\\195'\n"
    "local n = #ARGV - 3\n"
    "for i = 4, #ARGV - 1 do\n"
    "  if ARGV[i] == seal then\n"
    "    return redis.error_reply('DLSSEALED a seal is followed by a record') end\n"
    "end\n"
    "local first = redis.call('INCRBY', KEYS[2], n) - n\n"
    "for i = 1, n do\n"
    "  local pos = string.format('%d', first + i - 1)\n"
    "  local rec = ARGV[i + 3]\n"
    "  if ml then\n"
    "    redis.call('XADD', KEYS[1], 'MAXLEN', ml, '*', 'pos', pos, 'rec', rec)\n"
    "  else\n"
    "    redis.call('XADD', KEYS[1], '*', 'pos', pos, 'rec', rec)\n"
    "  end\n"
    "  if rec == seal then redis.call('SET', KEYS[4], pos) end\n"
    "end\n"
    "return first\n";

/* The create script: all six keys absent, then K:id, K:next = 0 and
 * K:maxlen when a bound is declared. ARGV: id hex, maxlen ("0": none). */
const char rds_create_lua[] =
    "if redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]) > 0 then\n"
    "  return redis.error_reply('DLSEXISTS the medium exists') end\n"
    "redis.call('SET', KEYS[3], ARGV[1])\n"
    "redis.call('SET', KEYS[2], '0')\n"
    "if ARGV[2] ~= '0' then redis.call('SET', KEYS[5], ARGV[2]) end\n"
    "return 1\n";
const size_t rds_append_lua_len = sizeof rds_append_lua - 1;
const size_t rds_create_lua_len = sizeof rds_create_lua - 1;
